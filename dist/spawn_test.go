package dist_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// worker is the behaviour the spawn tests start remotely, the Go twin of
// callpeer:worker/1: it greets its parent {hello, Self, 1}, answers {ping,
// From} with {pong, Self}, and exits bye on stop.
type worker struct{ parent actor.Pid }

var (
	atomHello = actor.Atom("hello")
	atomStop  = actor.Atom("stop")
	atomBye   = actor.Atom("bye")
)

func (w *worker) Init(c *actor.Context) {
	c.Send(w.parent, etf.Tuple{atomHello, c.Self(), 1})
}

func (w *worker) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case etf.Tuple:
		if len(m) == 2 && m[0] == atomPing {
			if from, ok := m[1].(actor.Pid); ok {
				c.Send(from, etf.Tuple{atomPong, c.Self()})
			}
		}
	case actor.Atom:
		if m == atomStop {
			c.Stop(atomBye)
		}
	}
}

func registerWorker(t *testing.T, n *testNode) {
	t.Helper()
	err := n.RegisterSpawn("worker", func(args []any) (actor.Actor, error) {
		if len(args) != 1 {
			return nil, errors.New("worker takes its parent")
		}
		parent, ok := args[0].(actor.Pid)
		if !ok {
			return nil, errors.New("worker's parent is not a pid")
		}
		return &worker{parent: parent}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Colony spawns, spawn-links and spawn-monitors a registered behaviour on
// another Colony node.
func TestSpawnColonyToColony(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	registerWorker(t, b)
	if err := b.RegisterSpawn("worker", func([]any) (actor.Actor, error) { return nil, nil }); !errors.Is(err, dist.ErrSpawnRegistered) {
		t.Errorf("a second RegisterSpawn of a name: %v", err)
	}

	type outcome struct {
		msgs []any
		err  error
	}
	res := make(chan outcome, 1)
	a.sys.Spawn(initFunc(func(c *actor.Context) {
		var o outcome
		defer func() {
			res <- o
			c.Stop(actor.Normal) // it traps exits: it would outlive Shutdown's first signal
		}()
		next := func() any {
			m, err := c.Receive(func(any) bool { return true }, 10*time.Second)
			if err != nil {
				return err
			}
			return m
		}
		// spawn: greeting, ping, stop.
		p1, err := a.Spawn(c, b.Name(), "worker", c.Self())
		if err != nil {
			o.err = err
			return
		}
		o.msgs = append(o.msgs, p1.IsRemote(), next())
		c.Send(p1, etf.Tuple{atomPing, c.Self()})
		o.msgs = append(o.msgs, next())
		c.Send(p1, atomStop)

		// spawn_link, trapping: the child's exit is an Exit message.
		c.TrapExit(true)
		p2, err := a.SpawnLink(c, b.Name(), "worker", c.Self())
		if err != nil {
			o.err = err
			return
		}
		o.msgs = append(o.msgs, next())
		c.Send(p2, atomStop)
		if ex, ok := next().(actor.Exit); ok && ex.From == p2 {
			o.msgs = append(o.msgs, ex.Reason)
		} else {
			o.msgs = append(o.msgs, "no exit")
		}

		// spawn_monitor: the child's exit is a Down.
		p3, ref, err := a.SpawnMonitor(c, b.Name(), "worker", c.Self())
		if err != nil {
			o.err = err
			return
		}
		o.msgs = append(o.msgs, next())
		c.Send(p3, atomStop)
		if d, ok := next().(actor.Down); ok && d.Ref == ref {
			o.msgs = append(o.msgs, d.Reason)
		} else {
			o.msgs = append(o.msgs, "no down")
		}

		// Nothing registered under the name: a process that dies of undef,
		// as an Erlang node's does for a function that does not exist; bad
		// arguments; no such node.
		_, uref, err := a.SpawnMonitor(c, b.Name(), "nosuch", 7)
		if err != nil {
			o.msgs = append(o.msgs, err)
		} else if d, ok := next().(actor.Down); ok && d.Ref == uref {
			o.msgs = append(o.msgs, d.Reason)
		} else {
			o.msgs = append(o.msgs, "no down")
		}
		_, err = a.Spawn(c, b.Name(), "worker", 1, 2)
		o.msgs = append(o.msgs, err)
		_, err = a.Spawn(c, "nosuchnode@127.0.0.1", "worker", c.Self())
		o.msgs = append(o.msgs, err)
	}))
	var o outcome
	select {
	case o = <-res:
	case <-time.After(60 * time.Second):
		t.Fatal("the spawning actor did not finish")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if len(o.msgs) != 10 {
		t.Fatalf("outcome %#v", o.msgs)
	}
	if o.msgs[0] != true {
		t.Errorf("the child's pid is not remote")
	}
	for i, at := range []int{1, 3, 5} {
		if m, ok := o.msgs[at].(etf.Tuple); !ok || m[0] != atomHello || m[2] != 1 {
			t.Errorf("greeting %d: %#v", i, o.msgs[at])
		}
	}
	if m, ok := o.msgs[2].(etf.Tuple); !ok || m[0] != atomPong {
		t.Errorf("pong: %#v", o.msgs[2])
	}
	if o.msgs[4] != atomBye || o.msgs[6] != atomBye {
		t.Errorf("exit and down reasons: %#v, %#v", o.msgs[4], o.msgs[6])
	}
	if got, want := fmt.Sprint(o.msgs[7]), fmt.Sprint(etf.Tuple{actor.Atom("undef"),
		[]any{etf.Tuple{actor.Atom("colony"), actor.Atom("nosuch"), []any{7}, []any{}}}}); got != want {
		t.Errorf("spawn of nothing registered: %s, want a Down with %s", got, want)
	}
	var se *dist.SpawnError
	if err, _ := o.msgs[8].(error); !errors.As(err, &se) || se.Reason != "badarg" || se.Node != b.Name() {
		t.Errorf("refused spawn: %#v", o.msgs[8])
	}
	if err, _ := o.msgs[9].(error); !errors.Is(err, dist.ErrNoConnection) {
		t.Errorf("spawn on no node: %#v", o.msgs[9])
	}

	// From outside the System.
	self, inbox := spawnCollector(t, a.sys, 4)
	p, err := a.Spawn(a.sys, b.Name(), "worker", self)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := recv(t, inbox, 10*time.Second).(etf.Tuple); !ok || m[1] != p {
		t.Errorf("greeting from outside's child: %#v", m)
	}
	a.sys.Send(p, atomStop)
}

// A child that dies in its Init, spawned with SpawnMonitor: its Down
// carries its own reason, as spawn_monitor/4's does, because the monitor
// is made with the child (the spawn request's monitor option), not after
// the reply, when the child is gone and the monitor would answer noproc.
// A Demonitor straight after SpawnMonitor takes the monitor back, and a
// refused spawn leaves none.
func TestSpawnMonitorDownCarriesTheChildsReason(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	registerWorker(t, b)
	boom := actor.Atom("boom")
	if err := b.RegisterSpawn("dies", func([]any) (actor.Actor, error) {
		return initFunc(func(c *actor.Context) { c.Stop(boom) }), nil
	}); err != nil {
		t.Fatal(err)
	}
	d, dch := spawnDriven(t, a.sys)
	spawnMonitorDies(t, a, d, dch, 20, b.Name(), "dies", boom)

	// Demonitored at once: no Down when the child stops.
	var child actor.Pid
	do(t, a.sys, d, func(c *actor.Context) {
		pid, ref, err := a.SpawnMonitor(c, b.Name(), "worker", c.Self())
		if err != nil {
			t.Error(err)
			return
		}
		child = pid
		if !c.Demonitor(ref, false) {
			t.Error("Demonitor of a live spawned child's monitor: false")
		}
		if _, _, err := a.SpawnMonitor(c, b.Name(), "worker"); err == nil { // no parent: refused
			t.Error("SpawnMonitor refused by the behaviour: no error")
		}
	})
	if m, ok := recv(t, dch, waitLong).(etf.Tuple); !ok || m[0] != atomHello || m[1] != child {
		t.Fatalf("greeting %#v from %v", m, child)
	}
	w, wch := spawnDriven(t, a.sys)
	do(t, a.sys, w, func(c *actor.Context) {
		if _, err := c.Monitor(child); err != nil {
			t.Error(err)
		}
	})
	a.sys.Send(child, atomStop)
	if dn, ok := recv(t, wch, waitLong).(actor.Down); !ok || dn.Pid != child {
		t.Fatalf("the witness's Down: %#v", dn)
	}
	// The witness has seen the child's Down; the demonitored watcher,
	// whose Downs travel the same connection, has none before a marker
	// sent after it.
	a.sys.Send(d, "marker")
	if m := recv(t, dch, waitLong); m != "marker" {
		t.Fatalf("the demonitored watcher got %#v", m)
	}
}

// spawnMonitorDies has the driven actor d SpawnMonitor name(args...) on
// node, rounds times, each child dying at once with reason: each Down
// must be its child's, with that reason.
func spawnMonitorDies(t *testing.T, n *testNode, d actor.Pid, dch chan any, rounds int, node actor.Atom, name string, reason actor.Reason, args ...any) {
	t.Helper()
	for round := 0; round < rounds; round++ {
		var child actor.Pid
		var ref actor.Ref
		do(t, n.sys, d, func(c *actor.Context) {
			var err error
			if child, ref, err = n.SpawnMonitor(c, node, name, args...); err != nil {
				t.Error(err)
			}
		})
		if t.Failed() {
			return
		}
		dn, ok := recv(t, dch, waitLong).(actor.Down)
		if !ok || dn.Ref != ref || dn.Pid != child || dn.Reason != reason {
			t.Fatalf("round %d: %#v, want the Down of %v with reason %v", round, dn, child, reason)
		}
	}
}
