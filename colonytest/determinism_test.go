package colonytest_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

// worker does a little of everything the mode schedules: it forwards to a
// peer, calls it, sleeps on the virtual clock, arms timers, and crashes
// on request.
type worker struct {
	id   int
	peer actor.Pid
	sink actor.Pid
}

type (
	hop   struct{ n int }
	crash struct{}
	tick  struct{ n int }
)

func (w *worker) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case hop:
		if m.n > 0 && !w.peer.IsZero() {
			c.Send(w.peer, hop{m.n - 1})
		}
		c.Send(w.sink, fmt.Sprintf("w%d hop %d", w.id, m.n))
		if m.n%3 == 0 && !w.peer.IsZero() {
			c.Call(w.peer, "ping", 50*time.Millisecond)
		}
	case tick:
		c.Send(w.sink, fmt.Sprintf("w%d tick %d at %v", w.id, m.n, time.Duration(time.Now().UnixNano()%int64(time.Hour))))
		if m.n > 0 {
			c.SendAfter(c.Self(), tick{m.n - 1}, time.Duration(m.n)*7*time.Millisecond)
		}
	case crash:
		panic("asked to")
	case actor.Request:
		c.Sleep(time.Duration(w.id) * time.Millisecond)
		c.Reply(m, w.id)
	case actor.Down:
		c.Send(w.sink, "down "+m.Pid.String())
	}
}

// mixedBody is a program of n workers in a ring, seeded by seed.
func mixedBody(n int, seed uint64) func(t *testing.T, sys *actor.System) {
	return func(t *testing.T, sys *actor.System) {
		r := rand.New(rand.NewPCG(seed, 1))
		p, err := colonytest.NewProbe(sys)
		if err != nil {
			t.Fatal(err)
		}
		ws := make([]*worker, n)
		pids := make([]actor.Pid, n)
		for i := range ws {
			ws[i] = &worker{id: i, sink: p.Pid()}
			if pids[i], err = sys.Spawn(ws[i]); err != nil {
				t.Fatal(err)
			}
		}
		for i := range ws {
			ws[i].peer = pids[(i+1)%n]
		}
		w, _ := sys.Monitor(pids[0])
		defer w.Stop()
		for i := 0; i < 3*n; i++ {
			to := pids[r.IntN(n)]
			switch r.IntN(4) {
			case 0:
				sys.Send(to, tick{r.IntN(4)})
			case 1:
				sys.Call(to, "x", 20*time.Millisecond)
			default:
				sys.Send(to, hop{r.IntN(6)})
			}
		}
		sys.Send(pids[0], crash{})
		time.Sleep(time.Second) // virtual: every timer has fired
		if _, err := p.Expect(time.Second, func(m any) bool { return m == "w1 hop 0" || strings.HasPrefix(fmt.Sprint(m), "w") }); err != nil {
			t.Fatal(err)
		}
		if _, err := sys.Call(pids[0], "x", time.Second); !errors.Is(err, actor.ErrNoProc) {
			t.Fatalf("a crashed worker answered a call: %v", err)
		}
	}
}

// TestSameSeedSameTrace: 100 runs of one seed give byte-identical traces,
// at GOMAXPROCS 1 and 2 (under -race in CI).
func TestSameSeedSameTrace(t *testing.T) {
	runs := 100
	if testing.Short() {
		runs = 20
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first []string
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for i := 0; i < runs; i++ {
			res := colonytest.Run(t, 42, mixedBody(8, 42))
			tr := res.Trace
			if first == nil {
				first = tr
				if len(first) < 100 {
					t.Fatalf("a short trace (%d events): the body did too little", len(first))
				}
				continue
			}
			if d := firstDiff(first, tr); d >= 0 {
				t.Fatalf("GOMAXPROCS %d, run %d: trace differs at event %d:\n  %s\n  %s", procs, i, d, at(first, d), at(tr, d))
			}
		}
	}
	t.Logf("%d runs at GOMAXPROCS 1 and 2: %d identical events each", 2*runs, len(first))
}

// TestSeedsDiffer: other seeds give other schedules (the source decides).
func TestSeedsDiffer(t *testing.T) {
	a := colonytest.Run(t, 1, mixedBody(8, 42))
	b := colonytest.Run(t, 2, mixedBody(8, 42))
	if firstDiff(a.Trace, b.Trace) < 0 {
		t.Fatal("seeds 1 and 2 gave the same trace")
	}
}

func TestVerifyDeterminism(t *testing.T) {
	colonytest.VerifyDeterminism(t, 7, mixedBody(5, 7))
}

func firstDiff(a, b []string) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func at(tr []string, i int) string {
	if i < len(tr) {
		return tr[i]
	}
	return "(end of trace)"
}
