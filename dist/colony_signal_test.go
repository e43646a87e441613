package dist_test

// Links, exits and monitors between two Colony nodes of one process.

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// driven runs the funcs it is sent in its handler and hands every other
// message to ch. A trapped exit signal from outside the System (the
// System's Shutdown) stops it.
type driven struct{ ch chan any }

func (d *driven) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case func(*actor.Context):
		m(c)
		return
	case actor.Exit:
		if m.From.IsZero() {
			c.Stop(m.Reason)
			return
		}
	}
	select {
	case d.ch <- msg:
	default:
		panic(fmt.Sprintf("driven: inbox full at %#v", msg))
	}
}

// spawnDriven spawns a driven actor; its messages come on the channel.
func spawnDriven(t *testing.T, sys *actor.System, opts ...actor.SpawnOption) (actor.Pid, chan any) {
	t.Helper()
	ch := make(chan any, 64)
	pid, err := sys.Spawn(&driven{ch}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return pid, ch
}

// do runs f in pid's handler and waits for it to return.
func do(t *testing.T, sys *actor.System, pid actor.Pid, f func(*actor.Context)) {
	t.Helper()
	done := make(chan struct{})
	if err := sys.Send(pid, func(c *actor.Context) { f(c); close(done) }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not run")
	}
}

// remoteOf is the pid of the actor pid of node's System as other nodes
// name it.
func remoteOf(t *testing.T, n *testNode, pid actor.Pid) actor.Pid {
	t.Helper()
	id, serial, ok := n.sys.LocalParts(pid)
	if !ok {
		t.Fatalf("%v is not a pid of %s", pid, n.Name())
	}
	r, err := actor.RemotePid(actor.RemoteID{Node: n.Name(), Creation: n.Creation(), ID: id, Serial: serial})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// watch returns a Watch of a local pid.
func watch(t *testing.T, sys *actor.System, pid actor.Pid) *actor.Watch {
	t.Helper()
	w, err := sys.Monitor(pid)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func waitDead(t *testing.T, w *actor.Watch, want actor.Reason) {
	t.Helper()
	select {
	case <-w.Done():
		if want != nil && w.Reason() != want {
			t.Errorf("exit reason %#v, want %#v", w.Reason(), want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("not dead within 10 s (want reason %v)", want)
	}
}

// connected starts two nodes and connects them.
func connected(t *testing.T) (a, b *testNode) {
	t.Helper()
	port := testEPMD(t)
	a = startNode(t, port, dist.Config{})
	b = startNode(t, port, dist.Config{})
	if err := a.Connect(ctxT(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// noMessage checks that nothing arrives on ch for a while: the absence of
// a signal has no event to wait for. Used only after a later event on the
// same path (a reply through the same connection) has been waited for.
func noMessage(t *testing.T, ch <-chan any) {
	t.Helper()
	select {
	case m := <-ch:
		t.Errorf("unexpected message %#v", m)
	default:
	}
}

// roundTrip waits until everything a sent to b before now has been
// handled by b's reader: an echo by name through the same connection.
func roundTrip(t *testing.T, a, b *testNode) {
	t.Helper()
	if _, ok := b.sys.Whereis("echo"); !ok {
		if _, err := b.sys.Spawn(&echo{}, actor.Name("echo")); err != nil {
			t.Fatal(err)
		}
	}
	self, inbox := spawnCollector(t, a.sys, 1)
	defer a.sys.Exit(self, actor.Kill)
	a.SendName(self, "echo", b.Name(), etf.Tuple{self, "sync"})
	recv(t, inbox, 10*time.Second)
}

func TestRemoteLinkExitReasons(t *testing.T) {
	a, b := connected(t)
	for _, tc := range []struct {
		name   string
		reason actor.Reason
	}{{"abnormal", actor.Atom("boom")}, {"shutdown", actor.Shutdown}, {"normal", actor.Normal}} {
		t.Run(tc.name, func(t *testing.T) {
			// A trapping actor of a links to an actor of b, which stops.
			trapper, inbox := spawnDriven(t, a.sys, actor.TrapExit())
			plain, _ := spawnDriven(t, a.sys)
			plainW := watch(t, a.sys, plain)
			peer, _ := spawnDriven(t, b.sys)
			rp := remoteOf(t, b, peer)
			for _, pid := range []actor.Pid{trapper, plain} {
				do(t, a.sys, pid, func(c *actor.Context) {
					if err := c.Link(rp); err != nil {
						t.Errorf("Link: %v", err)
					}
				})
			}
			// The links are set up on b when its reader has handled them.
			eventually(t, 10*time.Second, "both links on b", func() bool {
				return b.sys.HasRemoteLink(peer, remoteOf(t, a, trapper)) && b.sys.HasRemoteLink(peer, remoteOf(t, a, plain))
			})
			do(t, b.sys, peer, func(c *actor.Context) { c.Stop(tc.reason) })
			m := recv(t, inbox, 10*time.Second)
			if e, ok := m.(actor.Exit); !ok || e.From != rp || e.Reason != tc.reason {
				t.Errorf("trapping actor got %#v, want Exit{%v, %v}", m, rp, tc.reason)
			}
			if actor.IsNormal(tc.reason) {
				roundTrip(t, b, a)
				if !a.sys.Alive(plain) {
					t.Error("a normal exit killed a linked actor that does not trap exits")
				}
				a.sys.Exit(plain, actor.Kill)
			} else {
				waitDead(t, plainW, tc.reason)
			}
			if a.sys.HasRemoteLink(trapper, rp) {
				t.Error("the half of the link outlived the exit signal")
			}
		})
	}
}

func TestRemoteLinkLocalDeath(t *testing.T) {
	a, b := connected(t)
	// An actor of b traps and links to one of a; a's actor dies.
	peer, inbox := spawnDriven(t, b.sys, actor.TrapExit())
	local, _ := spawnDriven(t, a.sys)
	rl := remoteOf(t, a, local)
	do(t, b.sys, peer, func(c *actor.Context) { c.Link(rl) })
	eventually(t, 10*time.Second, "the link on a", func() bool { return a.sys.HasRemoteLink(local, remoteOf(t, b, peer)) })
	a.sys.Exit(local, actor.Kill)
	m := recv(t, inbox, 10*time.Second)
	if e, ok := m.(actor.Exit); !ok || e.From != rl || e.Reason != actor.Killed {
		t.Errorf("got %#v, want Exit{%v, killed}", m, rl)
	}
}

func TestRemoteExitSignal(t *testing.T) {
	a, b := connected(t)
	sender, _ := spawnDriven(t, a.sys)
	trapper, inbox := spawnDriven(t, b.sys, actor.TrapExit())
	plain, _ := spawnDriven(t, b.sys)
	rt, rpl := remoteOf(t, b, trapper), remoteOf(t, b, plain)
	rs := remoteOf(t, a, sender)
	plainW := watch(t, b.sys, plain)

	// A trapping target gets Exit messages, normal included.
	do(t, a.sys, sender, func(c *actor.Context) {
		c.Exit(rt, actor.Atom("hey"))
		c.Exit(rt, actor.Normal)
	})
	for _, want := range []actor.Reason{actor.Atom("hey"), actor.Normal} {
		if m := recv(t, inbox, 10*time.Second); m != (actor.Exit{From: rs, Reason: want}) {
			t.Errorf("got %#v, want Exit{%v, %v}", m, rs, want)
		}
	}
	// normal to one that does not trap is ignored; kill is untrappable.
	do(t, a.sys, sender, func(c *actor.Context) { c.Exit(rpl, actor.Normal) })
	roundTrip(t, a, b)
	if !b.sys.Alive(plain) {
		t.Fatal("exit(normal) killed an actor that does not trap exits")
	}
	do(t, a.sys, sender, func(c *actor.Context) { c.Exit(rt, actor.Kill) })
	waitDead(t, watch(t, b.sys, trapper), nil)
	// From outside the System too.
	if err := a.sys.Exit(rpl, actor.Atom("bye")); err != nil {
		t.Fatal(err)
	}
	waitDead(t, plainW, actor.Atom("bye"))
}

func TestRemoteLinkDeadPid(t *testing.T) {
	a, b := connected(t)
	gone, _ := spawnDriven(t, b.sys)
	rg := remoteOf(t, b, gone)
	b.sys.Exit(gone, actor.Kill)
	waitDead(t, watch(t, b.sys, gone), nil)

	trapper, inbox := spawnDriven(t, a.sys, actor.TrapExit())
	do(t, a.sys, trapper, func(c *actor.Context) {
		if err := c.Link(rg); err != nil {
			t.Errorf("Link of a remote pid: %v (the answer comes as a signal)", err)
		}
	})
	if m := recv(t, inbox, 10*time.Second); m != (actor.Exit{From: rg, Reason: actor.NoProc}) {
		t.Errorf("trapping: got %#v, want Exit{%v, noproc}", m, rg)
	}
	// As in OTP: a remote link to a dead pid kills a caller that does not
	// trap exits with noproc (a local one raises instead).
	plain, _ := spawnDriven(t, a.sys)
	w := watch(t, a.sys, plain)
	do(t, a.sys, plain, func(c *actor.Context) { c.Link(rg) })
	waitDead(t, w, actor.NoProc)
}

func TestRemoteUnlink(t *testing.T) {
	a, b := connected(t)
	la, inbox := spawnDriven(t, a.sys, actor.TrapExit())
	lb, binbox := spawnDriven(t, b.sys, actor.TrapExit())
	ra, rb := remoteOf(t, a, la), remoteOf(t, b, lb)
	do(t, a.sys, la, func(c *actor.Context) { c.Link(rb) })
	eventually(t, 10*time.Second, "the link on b", func() bool { return b.sys.HasRemoteLink(lb, ra) })
	do(t, a.sys, la, func(c *actor.Context) { c.Unlink(rb) })
	eventually(t, 10*time.Second, "the unlink on b", func() bool { return !b.sys.HasRemoteLink(lb, ra) })
	b.sys.Exit(lb, actor.Kill)
	a.sys.Exit(la, actor.Kill)
	roundTrip(t, b, a)
	roundTrip(t, a, b)
	noMessage(t, inbox)
	noMessage(t, binbox)
}

// Both ends link and unlink one pair at once, many times: after each
// round, both agree on whether they are linked.
func TestRemoteLinkUnlinkRace(t *testing.T) {
	a, b := connected(t)
	la, _ := spawnDriven(t, a.sys, actor.TrapExit())
	lb, _ := spawnDriven(t, b.sys, actor.TrapExit())
	ra, rb := remoteOf(t, a, la), remoteOf(t, b, lb)
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	for i := range rounds {
		// Each side ends its round linked or not, by the round's bits.
		ops := func(peer actor.Pid, bits int) func(*actor.Context) {
			return func(c *actor.Context) {
				for k := range 4 {
					if bits>>k&1 == 1 {
						c.Link(peer)
					} else {
						c.Unlink(peer)
					}
				}
			}
		}
		da, db := make(chan struct{}), make(chan struct{})
		a.sys.Send(la, func(c *actor.Context) { ops(rb, i)(c); close(da) })
		b.sys.Send(lb, func(c *actor.Context) { ops(ra, i*7+3)(c); close(db) })
		<-da
		<-db
		// Quiescence: every signal of the round has been handled on both
		// sides once a round trip each way has gone through.
		roundTrip(t, a, b)
		roundTrip(t, b, a)
		roundTrip(t, a, b)
		ha, hb := a.sys.HasRemoteLink(la, rb), b.sys.HasRemoteLink(lb, ra)
		if ha != hb {
			t.Fatalf("round %d: a linked %v, b linked %v", i, ha, hb)
		}
	}
}

func TestRemoteMonitor(t *testing.T) {
	a, b := connected(t)
	watcher, inbox := spawnDriven(t, a.sys)
	target, _ := spawnDriven(t, b.sys, actor.Name("target"))
	rt := remoteOf(t, b, target)

	var byPid, byName, unknown, dropped actor.Ref
	do(t, a.sys, watcher, func(c *actor.Context) {
		var err error
		if byPid, err = c.Monitor(rt); err != nil {
			t.Error(err)
		}
		if byName, err = c.MonitorNameAt("target", b.Name()); err != nil {
			t.Error(err)
		}
		if unknown, err = c.MonitorNameAt("nobody", b.Name()); err != nil {
			t.Error(err)
		}
		if dropped, err = c.Monitor(rt); err != nil {
			t.Error(err)
		}
	})
	if m := recv(t, inbox, 10*time.Second); m != (actor.Down{Ref: unknown, Reason: actor.NoProc, Name: "nobody", Node: b.Name()}) {
		t.Errorf("monitor of an unknown name: %#v", m)
	}
	do(t, a.sys, watcher, func(c *actor.Context) {
		if !c.Demonitor(dropped, false) {
			t.Error("Demonitor of an active remote monitor said false")
		}
	})
	eventually(t, 10*time.Second, "the monitors on b", func() bool {
		_, mons, _ := monitorCounts(b.sys, target)
		return mons == 2
	})
	b.sys.Exit(target, actor.Atom("bang"))
	got := map[actor.Ref]actor.Down{}
	for range 2 {
		d, ok := recv(t, inbox, 10*time.Second).(actor.Down)
		if !ok {
			t.Fatalf("not a Down: %#v", d)
		}
		got[d.Ref] = d
	}
	if d := got[byPid]; d != (actor.Down{Ref: byPid, Pid: rt, Reason: actor.Atom("bang")}) {
		t.Errorf("by pid: %#v", d)
	}
	if d := got[byName]; d != (actor.Down{Ref: byName, Reason: actor.Atom("bang"), Name: "target", Node: b.Name()}) {
		t.Errorf("by name: %#v", d)
	}
	// A dead pid: noproc.
	do(t, a.sys, watcher, func(c *actor.Context) { byPid, _ = c.Monitor(rt) })
	if m := recv(t, inbox, 10*time.Second); m != (actor.Down{Ref: byPid, Pid: rt, Reason: actor.NoProc}) {
		t.Errorf("monitor of a dead pid: %#v", m)
	}
	roundTrip(t, b, a)
	noMessage(t, inbox)
}

// monitorCounts is ActorInfo's counts of pid's links and monitors.
func monitorCounts(sys *actor.System, pid actor.Pid) (links, monitors, watching int) {
	info, err := sys.Info(pid)
	if err != nil {
		return -1, -1, -1
	}
	return info.Links, info.Monitors, info.Watching
}

// A monitor a remote actor holds on a local one is removed with its
// watcher's death (DEMONITOR_P at its exit).
func TestRemoteMonitorWatcherDies(t *testing.T) {
	a, b := connected(t)
	watcher, _ := spawnDriven(t, a.sys)
	target, _ := spawnDriven(t, b.sys)
	rt := remoteOf(t, b, target)
	do(t, a.sys, watcher, func(c *actor.Context) { c.Monitor(rt) })
	eventually(t, 10*time.Second, "the monitor on b", func() bool { _, m, _ := monitorCounts(b.sys, target); return m == 1 })
	a.sys.Exit(watcher, actor.Kill)
	eventually(t, 10*time.Second, "the monitor gone from b", func() bool { _, m, _ := monitorCounts(b.sys, target); return m == 0 })
}

// The connection is lost: every link and monitor over it fires once with
// noconnection, on both sides, and monitor_node says nodedown.
func TestRemoteSignalsNoConnection(t *testing.T) {
	a, b := connected(t)
	const k = 20
	var trappers []actor.Pid
	var inboxes []chan any
	var targets []actor.Pid
	for range k {
		tp, in := spawnDriven(t, a.sys, actor.TrapExit())
		pb, _ := spawnDriven(t, b.sys, actor.TrapExit())
		trappers, inboxes, targets = append(trappers, tp), append(inboxes, in), append(targets, pb)
		rb := remoteOf(t, b, pb)
		do(t, a.sys, tp, func(c *actor.Context) {
			c.Link(rb)
			c.Monitor(rb)
			c.MonitorNameAt("nobody_here", b.Name()) // noproc at once
		})
	}
	nodeWatcher, nodeInbox := spawnDriven(t, a.sys)
	a.MonitorNode(nodeWatcher, b.Name())
	a.MonitorNode(nodeWatcher, b.Name())
	eventually(t, 10*time.Second, "links on b", func() bool {
		for _, pb := range targets {
			if l, _, _ := monitorCounts(b.sys, pb); l != 1 {
				return false
			}
		}
		return true
	})
	for _, in := range inboxes {
		if d, ok := recv(t, in, 10*time.Second).(actor.Down); !ok || d.Reason != actor.NoProc {
			t.Fatalf("monitor of an unknown name: %#v", d)
		}
	}
	if !a.Disconnect(b.Name()) {
		t.Fatal("Disconnect: not connected")
	}
	for i, in := range inboxes {
		var exits, downs int
		for range 2 {
			switch m := recv(t, in, 10*time.Second).(type) {
			case actor.Exit:
				exits++
				if m.Reason != actor.NoConnection {
					t.Errorf("actor %d: %#v", i, m)
				}
			case actor.Down:
				downs++
				if m.Reason != actor.NoConnection {
					t.Errorf("actor %d: %#v", i, m)
				}
			default:
				t.Errorf("actor %d: %#v", i, m)
			}
		}
		if exits != 1 || downs != 1 {
			t.Errorf("actor %d: %d exits and %d downs, want 1 and 1", i, exits, downs)
		}
		if l, _, w := monitorCounts(a.sys, trappers[i]); l != 0 || w != 0 {
			t.Errorf("actor %d keeps %d links and %d monitors", i, l, w)
		}
	}
	for range 2 {
		if m, ok := recv(t, nodeInbox, 10*time.Second).(dist.NodeDown); !ok || m.Node != b.Name() {
			t.Errorf("monitor_node: %#v", m)
		}
	}
	// b's side: each linked actor gets noconnection too, and keeps no
	// record of the monitor.
	eventually(t, 10*time.Second, "b's side of the links", func() bool {
		for _, pb := range targets {
			if l, m, _ := monitorCounts(b.sys, pb); l != 0 || m != 0 {
				return false
			}
		}
		return true
	})
	// Once only: a later connection brings nothing more.
	if err := a.Connect(ctxT(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, a, b)
	for _, in := range inboxes {
		noMessage(t, in)
	}
	noMessage(t, nodeInbox)
}

// Monitors and links of a node that cannot be reached fire at once.
func TestRemoteSignalsUnreachable(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{HandshakeTimeout: 2 * time.Second})
	ghost, err := actor.RemotePid(actor.RemoteID{Node: actor.Atom(uniqueName("ghost")), Creation: 1, ID: 1, Serial: 1})
	if err != nil {
		t.Fatal(err)
	}
	tp, inbox := spawnDriven(t, a.sys, actor.TrapExit())
	var ref actor.Ref
	do(t, a.sys, tp, func(c *actor.Context) {
		c.Link(ghost)
		ref, _ = c.Monitor(ghost)
	})
	got := map[string]bool{}
	for range 2 {
		switch m := recv(t, inbox, 20*time.Second).(type) {
		case actor.Exit:
			got["exit"] = m == actor.Exit{From: ghost, Reason: actor.NoConnection}
		case actor.Down:
			got["down"] = m == actor.Down{Ref: ref, Pid: ghost, Reason: actor.NoConnection}
		}
	}
	if !got["exit"] || !got["down"] {
		t.Errorf("got %v", got)
	}
	nw, nin := spawnDriven(t, a.sys)
	gid, _ := ghost.Remote()
	a.MonitorNode(nw, gid.Node)
	if m, ok := recv(t, nin, 20*time.Second).(dist.NodeDown); !ok {
		t.Errorf("monitor_node of an unreachable node: %#v", m)
	}
}

// Links and monitors across the connection race the deaths of their
// targets and the loss of the connection: each Link of a trapping actor
// that never unlinks gives it exactly one Exit, and each Monitor exactly
// one Down, whichever of the target's death, noproc or noconnection
// decides.
func TestRemoteSignalsRaceDeathsAndLoss(t *testing.T) {
	a, b := connected(t)
	const watchers, targets, each = 16, 40, 6
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	var tpids, rtargets []actor.Pid
	for range targets {
		p, _ := spawnDriven(t, b.sys, actor.TrapExit())
		tpids, rtargets = append(tpids, p), append(rtargets, remoteOf(t, b, p))
	}
	type watcher struct {
		pid   actor.Pid
		inbox chan any
		picks []actor.Pid
	}
	ws := make([]watcher, watchers)
	for i := range ws {
		p, in := spawnDriven(t, a.sys, actor.TrapExit())
		perm := rng.Perm(targets)[:each]
		var picks []actor.Pid
		for _, k := range perm {
			picks = append(picks, rtargets[k])
		}
		ws[i] = watcher{p, in, picks}
	}
	kills := rng.Perm(targets)[:targets/2]
	dropAt := rng.IntN(len(kills))
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		a.sys.Send(w.pid, func(c *actor.Context) {
			defer wg.Done()
			for _, r := range w.picks {
				c.Link(r)
				c.Monitor(r)
			}
		})
	}
	for i, k := range kills {
		if i == dropAt {
			a.Disconnect(b.Name())
		}
		b.sys.Exit(tpids[k], actor.Kill)
	}
	wg.Wait()
	// A last loss, so that every link and monitor still up fires.
	a.Connect(ctxT(t, 10*time.Second), b.Name())
	a.Disconnect(b.Name())
	for i, w := range ws {
		exits, downs := map[actor.Pid]int{}, map[actor.Pid]int{}
		for range 2 * each {
			switch m := recv(t, w.inbox, 20*time.Second).(type) {
			case actor.Exit:
				exits[m.From]++
			case actor.Down:
				downs[m.Pid]++
			default:
				t.Fatalf("watcher %d: %#v", i, m)
			}
		}
		for _, r := range w.picks {
			if exits[r] != 1 || downs[r] != 1 {
				t.Errorf("watcher %d, target %v: %d exits and %d downs, want 1 and 1", i, r, exits[r], downs[r])
			}
		}
		mark := fmt.Sprint("mark", i)
		a.sys.Send(w.pid, mark)
		if m := recv(t, w.inbox, 10*time.Second); m != mark {
			t.Errorf("watcher %d: one more signal: %#v", i, m)
		}
		if l, _, mons := monitorCounts(a.sys, w.pid); l != 0 || mons != 0 {
			t.Errorf("watcher %d keeps %d links and %d monitors", i, l, mons)
		}
	}
}

// System.Monitor (a Watch, for code outside the System) of a remote pid.
func TestRemoteWatchFromOutside(t *testing.T) {
	a, b := connected(t)
	t1, _ := spawnDriven(t, b.sys)
	t2, _ := spawnDriven(t, b.sys)
	t3, _ := spawnDriven(t, b.sys)
	r1, r2, r3 := remoteOf(t, b, t1), remoteOf(t, b, t2), remoteOf(t, b, t3)
	w1, w2, w3 := watch(t, a.sys, r1), watch(t, a.sys, r2), watch(t, a.sys, r3)
	eventually(t, 10*time.Second, "the monitors on b", func() bool { _, m, _ := monitorCounts(b.sys, t2); return m == 1 })
	if !w2.Stop() {
		t.Error("Stop of an active remote Watch said false")
	}
	eventually(t, 10*time.Second, "the monitor gone from b", func() bool { _, m, _ := monitorCounts(b.sys, t2); return m == 0 })
	b.sys.Exit(t1, actor.Atom("gone"))
	waitDead(t, w1, actor.Atom("gone"))
	waitDead(t, watch(t, a.sys, r1), actor.NoProc)
	a.Disconnect(b.Name())
	waitDead(t, w3, actor.NoConnection)
	select {
	case <-w2.Done():
		t.Error("a stopped Watch fired")
	default:
	}
}
