package dist_test

// A supervisor on one Colony node with children on another
// (Node.RemoteChild): restarts on the child's node, the shutdown protocol
// over the wire, noconnection as an abnormal exit, and the restart
// intensity when the node stays away.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/epmd"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// childEvent is what a supChild tells the test: it started (reason nil),
// or it ended on an exit signal (its terminate), with the signal's sender
// and reason.
type childEvent struct {
	id     actor.Atom
	pid    actor.Pid // as its own node names it
	ended  bool
	from   actor.Pid
	reason actor.Reason
}

// supChild is the behaviour supervised across nodes. Mode "trap" traps
// exits and ends on any exit signal with its reason, after telling the test
// (a Server's Terminate); "stubborn" traps and ignores them (a kill is
// needed); "plain" does not trap. The message "crash" ends it with reason
// crash.
type supChild struct {
	id, mode actor.Atom
	ev       chan<- childEvent
}

func (s *supChild) tell(e childEvent) {
	select {
	case s.ev <- e:
	default:
		panic(fmt.Sprintf("supChild: event channel full at %+v", e))
	}
}

func (s *supChild) Init(c *actor.Context) {
	if s.mode != "plain" {
		c.TrapExit(true)
	}
	s.tell(childEvent{id: s.id, pid: c.Self()})
}

func (s *supChild) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Exit:
		if s.mode == "stubborn" && !m.From.IsZero() {
			return
		}
		s.tell(childEvent{id: s.id, pid: c.Self(), ended: true, from: m.From, reason: m.Reason})
		c.Stop(m.Reason)
	case actor.Atom:
		if m == "crash" {
			c.Stop(actor.Atom("crash"))
		}
	}
}

// registerSupChild registers supChild as "supchild" on n: its arguments
// are the child's id and mode. It returns the channel of the children's
// events and one for the hook calls of a supervisor (startSup).
func registerSupChild(t *testing.T, n *testNode) (chan childEvent, chan supEvent) {
	t.Helper()
	ev := make(chan childEvent, 32)
	err := n.RegisterSpawn("supchild", func(args []any) (actor.Actor, error) {
		if len(args) != 2 {
			return nil, errors.New("supchild takes an id and a mode")
		}
		id, ok1 := args[0].(actor.Atom)
		mode, ok2 := args[1].(actor.Atom)
		if !ok1 || !ok2 {
			return nil, errors.New("supchild's id and mode are atoms")
		}
		return &supChild{id: id, mode: mode, ev: ev}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev, make(chan supEvent, 32)
}

// supChildOn is the StartFunc of a supervisor on a for a supChild on b
// with the arguments args (its id and mode, or for a simple_one_for_one
// template its id).
func supChildOn(a, b *testNode, args ...actor.Atom) supervisor.StartFunc {
	anys := make([]any, len(args))
	for i, v := range args {
		anys[i] = v
	}
	return a.RemoteChild(b.Name(), "supchild", anys...)
}

// startSup starts spec's supervisor on a, its hook calls on sevs (none
// when sevs is nil).
func startSup(t *testing.T, a *testNode, sevs chan supEvent, spec supervisor.Spec) actor.Pid {
	t.Helper()
	if sevs != nil {
		spec.Hooks = recordHooks(sevs)
	}
	sup, err := supervisor.Start(a.sys, spec)
	if err != nil {
		t.Fatal(err)
	}
	return sup
}

// localStart starts a supChild on the supervisor's node (mode trap).
func localStart(ev chan<- childEvent, id actor.Atom) supervisor.StartFunc {
	return func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(&supChild{id: id, mode: "trap", ev: ev})
	}
}

// supEvent is one supervisor hook call.
type supEvent struct {
	kind     string // "exited", "restarted", "gaveup", "shutdown_error"
	id       string
	old, new actor.Pid
	reason   actor.Reason
	restart  bool
}

// recordHooks returns Hooks that hand every call to the channel.
func recordHooks(ch chan supEvent) *supervisor.Hooks {
	put := func(e supEvent) {
		select {
		case ch <- e:
		default:
			panic(fmt.Sprintf("supervisor hooks: channel full at %+v", e))
		}
	}
	return &supervisor.Hooks{
		ChildExited: func(_ actor.Pid, id string, pid actor.Pid, reason actor.Reason, restart bool) {
			put(supEvent{kind: "exited", id: id, old: pid, reason: reason, restart: restart})
		},
		Restarted: func(_ actor.Pid, id string, old, new actor.Pid) {
			put(supEvent{kind: "restarted", id: id, old: old, new: new})
		},
		GaveUp: func(actor.Pid) { put(supEvent{kind: "gaveup"}) },
		ShutdownError: func(_ actor.Pid, id string, pid actor.Pid, reason actor.Reason) {
			put(supEvent{kind: "shutdown_error", id: id, old: pid, reason: reason})
		},
	}
}

const waitLong = 20 * time.Second

// nextEvent waits up to waitLong for the next event on ch (what names
// it).
func nextEvent[E any](t *testing.T, ch <-chan E, what string) E {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(waitLong):
		var zero E
		t.Fatalf("no %s within %v", what, waitLong)
		return zero
	}
}

func nextChild(t *testing.T, ch <-chan childEvent) childEvent {
	t.Helper()
	return nextEvent(t, ch, "child event")
}

// noEvent fails t if ch holds an event (what names it).
func noEvent[E any](t *testing.T, ch <-chan E, what string) {
	t.Helper()
	select {
	case e := <-ch:
		t.Errorf("unexpected %s %+v", what, e)
	default:
	}
}

// wantExitedToRestart waits for the supervisor's next hook call and fails
// t unless it is a child's exit with reason, to be restarted.
func wantExitedToRestart(t *testing.T, sevs <-chan supEvent, reason actor.Reason) {
	t.Helper()
	if e := nextSup(t, sevs); e.kind != "exited" || e.reason != reason || !e.restart {
		t.Fatalf("supervisor event %+v, want the child exited %v, to restart", e, reason)
	}
}

func nextSup(t *testing.T, ch <-chan supEvent) supEvent {
	t.Helper()
	return nextEvent(t, ch, "supervisor event")
}

// started waits for the start of the child id and returns its pid on its
// own node. Only for one child at a time: a child's start event is sent by
// its Init, which may run after the supervisor has gone on to the next one.
func started(t *testing.T, ch <-chan childEvent, id actor.Atom) actor.Pid {
	t.Helper()
	e := nextChild(t, ch)
	if e.ended || e.id != id {
		t.Fatalf("child event %+v, want the start of %s", e, id)
	}
	return e.pid
}

func whichPid(t *testing.T, sys *actor.System, sup actor.Pid, id string) actor.Pid {
	t.Helper()
	kids, err := supervisor.WhichChildren(sys, sup)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if k.ID == id {
			return k.Pid
		}
	}
	t.Fatalf("no child %s in %+v", id, kids)
	return actor.Pid{}
}

// A one_for_one supervisor on node a with a child on node b: the child
// killed on b is restarted on b; the supervisor stopped shuts the child
// down with shutdown, which the child's terminate sees as sent by the
// supervisor.
func TestRemoteChildRestartAndShutdown(t *testing.T) {
	a, b := connected(t)
	ev, sevs := registerSupChild(t, b)
	sup := startSup(t, a, sevs, supervisor.Spec{
		Intensity: 5, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "w", Start: supChildOn(a, b, "w", "trap")}},
	})
	first := started(t, ev, "w")
	if got, want := whichPid(t, a.sys, sup, "w"), remoteOf(t, b, first); got != want {
		t.Fatalf("WhichChildren names %v, want the child on b %v", got, want)
	}
	if n, err := supervisor.CountChildren(a.sys, sup); err != nil || n.Active != 1 {
		t.Errorf("CountChildren: %+v, %v; want 1 active", n, err)
	}

	b.sys.Exit(first, actor.Kill)
	wantExitedToRestart(t, sevs, actor.Killed)
	second := started(t, ev, "w")
	if e := nextSup(t, sevs); e.kind != "restarted" || e.old != remoteOf(t, b, first) || e.new != remoteOf(t, b, second) {
		t.Fatalf("supervisor event %+v, want restarted %v -> %v", e, first, second)
	}
	if !b.sys.HasRemoteLink(second, remoteOf(t, a, sup)) {
		t.Error("the restarted child is not linked to the supervisor on b")
	}

	w := watch(t, a.sys, sup)
	bw := watch(t, b.sys, second)
	a.sys.Exit(sup, actor.Shutdown)
	e := nextChild(t, ev)
	if !e.ended || e.pid != second || e.reason != actor.Reason(actor.Shutdown) || e.from != remoteOf(t, a, sup) {
		t.Fatalf("child event %+v, want %v's terminate with shutdown from the supervisor", e, second)
	}
	waitDead(t, bw, actor.Shutdown)
	waitDead(t, w, actor.Shutdown)
	noEvent(t, sevs, "supervisor event")
}

// The shutdown protocol over the wire: a child that ignores the shutdown
// signal is killed when its Shutdown timeout runs out (a shutdown_error);
// a BrutalKill child is killed at once, with no report; a plain child
// (not trapping) dies of the shutdown signal.
func TestRemoteChildShutdownTimeoutAndBrutalKill(t *testing.T) {
	a, b := connected(t)
	ev, sevs := registerSupChild(t, b)
	sup := startSup(t, a, sevs, supervisor.Spec{
		Children: []supervisor.ChildSpec{
			{ID: "stubborn", Start: supChildOn(a, b, "stubborn", "stubborn"), Shutdown: 100 * time.Millisecond},
			{ID: "brutal", Start: supChildOn(a, b, "brutal", "trap"), Shutdown: supervisor.BrutalKill},
			{ID: "plain", Start: supChildOn(a, b, "plain", "plain")},
		},
	})
	pids := map[actor.Atom]actor.Pid{}
	for range 3 {
		e := nextChild(t, ev)
		pids[e.id] = e.pid
	}
	watches := map[actor.Atom]*actor.Watch{}
	for id, pid := range pids {
		watches[id] = watch(t, b.sys, pid)
	}
	w := watch(t, a.sys, sup)
	start := time.Now()
	if err := supervisor.TerminateChild(a.sys, sup, "stubborn"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("the stubborn child was stopped after %v, before its 100 ms timeout", d)
	}
	waitDead(t, watches["stubborn"], actor.Killed)
	if e := nextSup(t, sevs); e.kind != "shutdown_error" || e.id != "stubborn" || e.reason != actor.Reason(actor.Killed) {
		t.Fatalf("supervisor event %+v, want a shutdown_error killed for stubborn", e)
	}
	a.sys.Exit(sup, actor.Shutdown)
	waitDead(t, w, actor.Shutdown)
	waitDead(t, watches["plain"], actor.Shutdown)
	waitDead(t, watches["brutal"], actor.Killed)
	noEvent(t, ev, "child event (a kill runs no terminate; plain traps nothing)")
	noEvent(t, sevs, "supervisor event")
}

// A lost connection is the child's abnormal exit, noconnection: the
// supervisor restarts it, and the restart's spawn connects again.
func TestRemoteChildNoConnectionRestarts(t *testing.T) {
	a, b := connected(t)
	ev, sevs := registerSupChild(t, b)
	sup := startSup(t, a, sevs, supervisor.Spec{
		Intensity: 5, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "w", Start: supChildOn(a, b, "w", "trap")}},
	})
	first := started(t, ev, "w")
	if !a.Disconnect(b.Name()) {
		t.Fatal("Disconnect: not connected")
	}
	wantExitedToRestart(t, sevs, actor.NoConnection)
	// On b the old child's link fires too, and a new one starts: in
	// either order.
	var second actor.Pid
	for ended := false; second.IsZero() || !ended; {
		e := nextChild(t, ev)
		switch {
		case e.ended && e.pid == first && !ended:
			ended = true
			if e.reason != actor.Reason(actor.NoConnection) {
				t.Errorf("the old child ended with %v, want noconnection", e.reason)
			}
		case !e.ended && second.IsZero():
			second = e.pid
		default:
			t.Fatalf("child event %+v", e)
		}
	}
	if e := nextSup(t, sevs); e.kind != "restarted" || e.new != remoteOf(t, b, second) {
		t.Fatalf("supervisor event %+v, want restarted as %v", e, second)
	}
	if got := whichPid(t, a.sys, sup, "w"); got != remoteOf(t, b, second) {
		t.Errorf("WhichChildren names %v, want %v", got, second)
	}
}

// countingNode starts a node whose System counts its supervisors' reports
// by their Context (and logs none of them); cfg, if given, is startNode's.
func countingNode(t *testing.T, port int, reports *sync.Map, cfg ...dist.Config) *testNode {
	t.Helper()
	sys := testsys.Start(t, actor.Config{Reporter: func(r actor.Report) {
		if r.Kind == actor.SupervisorReport {
			v, _ := reports.LoadOrStore(r.Context, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
		}
	}})
	var c dist.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	return startNodeOn(t, sys, port, c)
}

// The child's node stops for good: the supervisor sees noconnection, each
// restart fails (the node cannot be reached), each try counts against the
// intensity (OTP's try_again_restart), and the supervisor gives up.
func TestRemoteChildNodeGoneGivesUp(t *testing.T) {
	port := testEPMD(t)
	var reports sync.Map
	a := countingNode(t, port, &reports)
	b := startNode(t, port, dist.Config{})
	ev, sevs := registerSupChild(t, b)
	sup := startSup(t, a, sevs, supervisor.Spec{
		Intensity: 3, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "w", Start: supChildOn(a, b, "w", "plain")}},
	})
	started(t, ev, "w")
	w := watch(t, a.sys, sup)
	if err := b.Stop(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	wantExitedToRestart(t, sevs, actor.NoConnection)
	if e := nextSup(t, sevs); e.kind != "gaveup" {
		t.Fatalf("supervisor event %+v, want it to give up", e)
	}
	waitDead(t, w, actor.Shutdown)
	n := func(ctx string) int64 {
		if v, ok := reports.Load(ctx); ok {
			return v.(*atomic.Int64).Load()
		}
		return 0
	}
	// Intensity 3: three restarts tried and failed, the fourth refused.
	if n("start_error") != 3 || n("shutdown") != 1 {
		t.Errorf("reports: %d start_error, %d shutdown; want 3 and 1", n("start_error"), n("shutdown"))
	}
}

// The child's node stops and a node of the same name comes back: the
// supervisor, retrying within its intensity, restarts the child there.
func TestRemoteChildNodeComesBack(t *testing.T) {
	port := testEPMD(t)
	var reports sync.Map // and no log line for each failed try
	a := countingNode(t, port, &reports)
	b := startNode(t, port, dist.Config{})
	ev, sevs := registerSupChild(t, b)
	sup := startSup(t, a, sevs, supervisor.Spec{
		// Every failed try counts: enough for the time the node is away.
		Intensity: 1 << 30, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "w", Start: supChildOn(a, b, "w", "plain")}},
	})
	started(t, ev, "w")
	if err := b.Stop(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if e := nextSup(t, sevs); e.kind != "exited" || e.reason != actor.Reason(actor.NoConnection) {
		t.Fatalf("supervisor event %+v, want the child exited noconnection", e)
	}
	unregistered(t, port, b.Name())
	b2 := startNode(t, port, dist.Config{Name: string(b.Name())})
	ev2, _ := registerSupChild(t, b2)
	second := started(t, ev2, "w")
	if e := nextSup(t, sevs); e.kind != "restarted" || e.new != remoteOf(t, b2, second) {
		t.Fatalf("supervisor event %+v, want restarted as %v on the new node", e, second)
	}
	if n, ok := reports.Load("start_error"); ok {
		t.Logf("%d restarts failed while the node was away", n.(*atomic.Int64).Load())
	}
	if got := whichPid(t, a.sys, sup, "w"); got != remoteOf(t, b2, second) {
		t.Errorf("WhichChildren names %v, want %v", got, second)
	}
}

// one_for_all with local and remote children: the death of the remote one
// stops the local ones (reverse order) and restarts all in order, the
// remote one on its node; the death of a local one shuts the remote one
// down with shutdown and restarts it.
func TestRemoteChildOneForAllMixed(t *testing.T) {
	a, b := connected(t)
	ev, sevs := registerSupChild(t, b)
	sup := startSup(t, a, sevs, supervisor.Spec{
		Strategy: supervisor.OneForAll, Intensity: 5, Period: time.Minute,
		Children: []supervisor.ChildSpec{
			{ID: "l1", Start: localStart(ev, "l1")},
			{ID: "r", Start: supChildOn(a, b, "r", "trap")},
			{ID: "l2", Start: localStart(ev, "l2")},
		},
	})
	pids := startedAll(t, ev, "l1", "r", "l2")
	if !a.sys.Alive(pids["l1"]) || !b.sys.Alive(pids["r"]) || !a.sys.Alive(pids["l2"]) {
		t.Fatalf("pids %v: want l1 on a, r on b", pids)
	}

	// The remote child dies: l2 then l1 are stopped, then all start.
	b.sys.Send(pids["r"], actor.Atom("crash"))
	if e := nextSup(t, sevs); e.kind != "exited" || e.id != "r" || e.reason != actor.Reason(actor.Atom("crash")) {
		t.Fatalf("supervisor event %+v, want r exited crash", e)
	}
	for _, id := range []actor.Atom{"l2", "l1"} {
		e := nextChild(t, ev)
		if !e.ended || e.id != id || e.reason != actor.Reason(actor.Shutdown) {
			t.Fatalf("child event %+v, want %s stopped with shutdown", e, id)
		}
	}
	for _, id := range []string{"l1", "r", "l2"} {
		if e := nextSup(t, sevs); e.kind != "restarted" || e.id != id {
			t.Fatalf("supervisor event %+v, want %s restarted", e, id)
		}
	}
	pids = startedAll(t, ev, "l1", "r", "l2")
	if !b.sys.Alive(pids["r"]) {
		t.Fatalf("r restarted as %v, not on b", pids["r"])
	}

	// A local child dies: the remote one is shut down through the wire.
	a.sys.Send(pids["l1"], actor.Atom("crash"))
	if e := nextSup(t, sevs); e.kind != "exited" || e.id != "l1" {
		t.Fatalf("supervisor event %+v, want l1 exited", e)
	}
	for _, id := range []actor.Atom{"l2", "r"} {
		e := nextChild(t, ev)
		if !e.ended || e.id != id || e.reason != actor.Reason(actor.Shutdown) {
			t.Fatalf("child event %+v, want %s stopped with shutdown", e, id)
		}
		if id == "r" && e.from != remoteOf(t, a, sup) {
			t.Errorf("r's shutdown came from %v, not the supervisor", e.from)
		}
	}
	for _, id := range []string{"l1", "r", "l2"} {
		if e := nextSup(t, sevs); e.kind != "restarted" || e.id != id {
			t.Fatalf("supervisor event %+v, want %s restarted", e, id)
		}
	}
	pids = startedAll(t, ev, "l1", "r", "l2")
	w := watch(t, a.sys, sup)
	rw := watch(t, b.sys, pids["r"])
	a.sys.Exit(sup, actor.Shutdown)
	waitDead(t, w, actor.Shutdown)
	waitDead(t, rw, actor.Shutdown)
}

// A remote child whose behaviour is not registered on its node is a
// process that dies of undef at once, as spawn_link of a function that does
// not exist on an Erlang node is: the supervisor restarts it until its
// intensity is spent, and gives up with shutdown.
func TestRemoteChildNotRegistered(t *testing.T) {
	a, b := connected(t)
	parent, inbox := spawnDriven(t, a.sys, actor.TrapExit())
	var sup actor.Pid
	var err error
	do(t, a.sys, parent, func(c *actor.Context) {
		sup, err = supervisor.StartLink(c, supervisor.Spec{Intensity: 2, Period: time.Minute,
			Children: []supervisor.ChildSpec{{ID: "w", Start: a.RemoteChild(b.Name(), "nosuch")}}})
	})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if m, ok := recv(t, inbox, 20*time.Second).(actor.Exit); !ok || m.From != sup || m.Reason != actor.Shutdown {
		t.Fatalf("got %#v, want the supervisor's exit with shutdown", m)
	}
}

// startedAll waits for the starts of the children ids, in any order, and
// returns their pids on their own nodes.
func startedAll(t *testing.T, ch <-chan childEvent, ids ...actor.Atom) map[actor.Atom]actor.Pid {
	t.Helper()
	pids := map[actor.Atom]actor.Pid{}
	for range ids {
		e := nextChild(t, ch)
		if _, dup := pids[e.id]; e.ended || dup {
			t.Fatalf("child event %+v, want the start of one of %v", e, ids)
		}
		pids[e.id] = e.pid
	}
	for _, id := range ids {
		if _, ok := pids[id]; !ok {
			t.Fatalf("no start of %s in %v", id, pids)
		}
	}
	return pids
}

// unregistered waits until the epmd at port no longer knows node (a
// stopped node's registration ends when epmd sees its connection close).
func unregistered(t *testing.T, port int, node actor.Atom) {
	t.Helper()
	alive, _, _ := strings.Cut(string(node), "@")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	eventually(t, waitLong, "epmd to forget "+string(node), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := epmd.Lookup(ctx, addr, alive)
		return err != nil
	})
}

// A simple_one_for_one template on another node: StartChildArgs's
// arguments follow the template's, TerminateChildPid stops a child by its
// remote pid, and a remote pid that is not a child is not found.
func TestRemoteChildSimpleOneForOne(t *testing.T) {
	a, b := connected(t)
	ev, _ := registerSupChild(t, b)
	sup := startSup(t, a, nil, supervisor.Spec{
		Strategy: supervisor.SimpleOneForOne,
		Children: []supervisor.ChildSpec{{ID: "d", Start: supChildOn(a, b, "d")}},
	})
	pid, err := supervisor.StartChildArgs(a.sys, sup, actor.Atom("trap"))
	if err != nil {
		t.Fatal(err)
	}
	local := started(t, ev, "d")
	if pid != remoteOf(t, b, local) {
		t.Fatalf("StartChildArgs: %v, want the child on b %v", pid, local)
	}
	other, _ := spawnCollector(t, b.sys, 1)
	if err := supervisor.TerminateChildPid(a.sys, sup, remoteOf(t, b, other)); !errors.Is(err, supervisor.ErrNotFound) {
		t.Errorf("TerminateChildPid of a remote pid that is no child: %v, want ErrNotFound", err)
	}
	if err := supervisor.TerminateChildPid(a.sys, sup, pid); err != nil {
		t.Fatal(err)
	}
	if e := nextChild(t, ev); !e.ended || e.pid != local || e.reason != actor.Reason(actor.Shutdown) {
		t.Fatalf("child event %+v, want %v stopped with shutdown", e, local)
	}
	if n, err := supervisor.CountChildren(a.sys, sup); err != nil || n.Active != 0 {
		t.Errorf("CountChildren: %+v, %v; want none active", n, err)
	}
}

// A supervisor killed (by its own parent, say) takes its remote child down
// through their link: the child gets the Exit killed from the supervisor.
func TestRemoteChildSupervisorKilled(t *testing.T) {
	a, b := connected(t)
	ev, _ := registerSupChild(t, b)
	sup := startSup(t, a, nil, supervisor.Spec{
		Children: []supervisor.ChildSpec{{ID: "w", Start: supChildOn(a, b, "w", "trap")}},
	})
	pid := started(t, ev, "w")
	a.sys.Exit(sup, actor.Kill)
	e := nextChild(t, ev)
	if !e.ended || e.pid != pid || e.reason != actor.Reason(actor.Killed) || e.from != remoteOf(t, a, sup) {
		t.Fatalf("child event %+v, want %v's Exit killed from the supervisor", e, pid)
	}
	eventually(t, waitLong, "the child's death", func() bool { return !b.sys.Alive(pid) })
}
