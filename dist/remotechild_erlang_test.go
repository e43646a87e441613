//go:build unix

package dist_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/internal/erltest"
	"github.com/colonyrt/colony/supervisor"
)

// A Colony supervisor with its child on an Erlang node: RemoteChild's
// "M:F" spawn-links M:F(Args...) there (callpeer:worker/1, which greets
// its parent and exits bye when told stop). The child's exit is restarted
// there; the supervisor's stop ends it with shutdown (it does not trap
// exits); the Erlang node halted is noconnection, and with the node gone
// the restarts fail until the intensity is spent.
func TestRemoteChildOnErlangNode(t *testing.T) {
	erltest.Need(t, "erl", "erlc", "epmd")
	port := erltest.EPMD(t)
	ck := cookie(t)
	dir := erltest.Compile(t, "callpeer", peerModule)
	var reports sync.Map
	n := countingNode(t, port, &reports, dist.Config{Cookie: ck})
	erl := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	erlAtom := actor.Atom(erl.Name)
	parent, inbox := spawnCollector(t, n.sys, 16)
	hello := func() actor.Pid {
		t.Helper()
		m, ok := recv(t, inbox, waitLong).(etf.Tuple)
		if !ok || len(m) != 3 || m[0] != atomHello {
			t.Fatalf("message %#v, want {hello, Pid, 1}", m)
		}
		return m[1].(actor.Pid)
	}
	spec := func(intensity int) supervisor.Spec {
		return supervisor.Spec{
			Intensity: intensity, Period: time.Minute,
			Children: []supervisor.ChildSpec{{ID: "w", Start: n.RemoteChild(erlAtom, "callpeer:worker", parent)}},
		}
	}

	sevs := make(chan supEvent, 16)
	sup := startSup(t, n, sevs, spec(5))
	first := hello()
	if id, ok := first.Remote(); !ok || id.Node != erlAtom || whichPid(t, n.sys, sup, "w") != first {
		t.Fatalf("the child %v is not the supervisor's child on %s", first, erlAtom)
	}
	if err := n.SendRemote(parent, first, atomStop); err != nil {
		t.Fatal(err)
	}
	if e := nextSup(t, sevs); e.kind != "exited" || e.old != first || e.reason != actor.Reason(atomBye) || !e.restart {
		t.Fatalf("supervisor event %+v, want %v exited bye, to restart", e, first)
	}
	second := hello()
	if e := nextSup(t, sevs); e.kind != "restarted" || e.new != second {
		t.Fatalf("supervisor event %+v, want restarted as %v", e, second)
	}
	d, dch := spawnDriven(t, n.sys)
	do(t, n.sys, d, func(c *actor.Context) {
		if _, err := c.Monitor(second); err != nil {
			t.Error(err)
		}
	})
	w := watch(t, n.sys, sup)
	n.sys.Exit(sup, actor.Shutdown)
	if dn, ok := recv(t, dch, waitLong).(actor.Down); !ok || dn.Pid != second || dn.Reason != actor.Reason(actor.Shutdown) {
		t.Fatalf("monitor of the child: %#v, want its Down shutdown", dn)
	}
	waitDead(t, w, actor.Shutdown)

	// The node goes: noconnection, then three failed restarts, and the
	// supervisor gives up.
	sevs = make(chan supEvent, 16)
	sup = startSup(t, n, sevs, spec(3))
	third := hello()
	w = watch(t, n.sys, sup)
	erl.EvalTimeout("erlang:halt().", 10*time.Second) // no value comes back
	if e := nextSup(t, sevs); e.kind != "exited" || e.old != third || e.reason != actor.Reason(actor.NoConnection) {
		t.Fatalf("supervisor event %+v, want %v exited noconnection", e, third)
	}
	if e := nextSup(t, sevs); e.kind != "gaveup" {
		t.Fatalf("supervisor event %+v, want it to give up", e)
	}
	waitDead(t, w, actor.Shutdown)
	if v, ok := reports.Load("start_error"); !ok || v.(*atomic.Int64).Load() != 3 {
		t.Errorf("start_error reports: %v, want 3", v)
	}
}
