package pg

import (
	"slices"
	"testing"

	"github.com/colonyrt/colony/actor"
	"pgregory.net/rapid"
)

// subtract is Erlang's --: against the one-at-a-time definition, for
// short and long lists of pids with repeats.
func TestSubtractIsErlangMinus(t *testing.T) {
	pids := make([]actor.Pid, 6)
	for i := range pids {
		p, err := actor.RemotePid(actor.RemoteID{Node: "sub@127.0.0.1", Creation: 1, ID: uint32(i + 1), Serial: 1})
		if err != nil {
			t.Fatal(err)
		}
		pids[i] = p
	}
	gen := rapid.SliceOfN(rapid.SampledFrom(pids), 0, 40)
	rapid.Check(t, func(rt *rapid.T) {
		list, minus := gen.Draw(rt, "list"), gen.Draw(rt, "minus")
		want := slices.Clone(list)
		for _, p := range minus {
			if i := slices.Index(want, p); i >= 0 {
				want = slices.Delete(want, i, i+1)
			}
		}
		if got := subtract(list, minus); !slices.Equal(got, want) {
			rt.Fatalf("%v -- %v = %v, want %v", list, minus, got, want)
		}
	})
}
