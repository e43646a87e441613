package sysmsg_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
	"github.com/colonyrt/colony/sysmsg"
)

const wait = 10 * time.Second

// recorder is a Server that records what its callbacks see, in order.
type recorder struct {
	actor.ServerBase
	n    int
	seen []any
	term chan actor.Reason // Terminate's reason, if not nil
}

func (r *recorder) Init(c *actor.Context) error { c.TrapExit(true); return nil }
func (r *recorder) HandleCast(c *actor.Context, m any) {
	r.n++
	r.seen = append(r.seen, m)
}
func (r *recorder) HandleCall(c *actor.Context, req actor.Request) {
	r.seen = append(r.seen, req.Msg)
	c.Reply(req, r.n)
}
func (r *recorder) HandleInfo(c *actor.Context, m any) { r.seen = append(r.seen, m) }
func (r *recorder) Terminate(c *actor.Context, reason actor.Reason) {
	if r.term != nil {
		r.term <- reason
	}
}

func start(t *testing.T) *actor.System {
	t.Helper()
	return testsys.Start(t, actor.Config{Schedulers: 2})
}

func TestGetStateSeesEarlierCasts(t *testing.T) {
	sys := start(t)
	r := &recorder{}
	pid, err := actor.StartServer(sys, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		actor.Cast(sys, pid, i)
	}
	// In mailbox order: the state seen has all five casts.
	v, err := sysmsg.GetState(sys, pid, wait)
	if err != nil {
		t.Fatal(err)
	}
	if v != any(r) || r.n != 5 {
		t.Fatalf("GetState = %v (n %d), want the server's value with n 5", v, r.n)
	}
}

func TestSuspendKeepsQueuedMessagesInOrder(t *testing.T) {
	sys := start(t)
	r := &recorder{}
	pid, _ := actor.StartServer(sys, r)
	if err := sysmsg.Suspend(sys, pid, wait); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if i%5 == 4 {
			sys.Send(pid, fmt.Sprint("info", i)) // HandleInfo
		} else {
			actor.Cast(sys, pid, i)
		}
	}
	// A call to a suspended server is not answered.
	if _, err := sys.Call(pid, "call", 50*time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("Call while suspended: %v, want a timeout", err)
	}
	// System messages are: the state is untouched, the status says so.
	st, err := sysmsg.GetStatus(sys, pid, wait)
	if err != nil || !st.Suspended {
		t.Fatalf("GetStatus while suspended: %+v, %v", st, err)
	}
	if _, err := sysmsg.GetState(sys, pid, wait); err != nil || r.n != 0 || len(r.seen) != 0 {
		t.Fatalf("while suspended the server handled %v (err %v)", r.seen, err)
	}
	if err := sysmsg.Resume(sys, pid, wait); err != nil {
		t.Fatal(err)
	}
	if _, err := sysmsg.GetState(sys, pid, wait); err != nil {
		t.Fatal(err)
	}
	// The timed-out call was queued between the messages 19 and the
	// status: the seen list is the 20 messages in order, then "call".
	got := r.seen
	if len(got) != 21 || got[20] != "call" {
		t.Fatalf("after Resume the server saw %v", got)
	}
	for i := range 20 {
		w := any(i)
		if i%5 == 4 {
			w = fmt.Sprint("info", i)
		}
		if got[i] != w {
			t.Fatalf("message %d: got %v, want %v (all: %v)", i, got[i], w, got)
		}
	}
	st, _ = sysmsg.GetStatus(sys, pid, wait)
	if st.Suspended {
		t.Fatal("GetStatus after Resume: suspended")
	}
}

func TestReplaceStateKeepsStateWhenFuncPanics(t *testing.T) {
	sys := start(t)
	r := &recorder{}
	pid, _ := actor.StartServer(sys, r)
	// A new value of the same type becomes the server.
	r2 := &recorder{n: 42}
	v, err := sysmsg.ReplaceState(sys, pid, func(s any) any {
		if s != any(r) {
			panic("not the state")
		}
		return r2
	}, wait)
	if err != nil || v != any(r2) {
		t.Fatalf("ReplaceState = %v, %v", v, err)
	}
	if n, err := actor.Call[int](sys, pid, "n", wait); err != nil || n != 42 {
		t.Fatalf("after ReplaceState the server answers %d, %v; want 42", n, err)
	}
	// A func that panics leaves the state as it was, and the server runs.
	_, err = sysmsg.ReplaceState(sys, pid, func(any) any { panic("boom") }, wait)
	var ce *actor.SysCallbackError
	if !errors.As(err, &ce) || ce.Value != "boom" || ce.Refused {
		t.Fatalf("ReplaceState with a panicking func: %v", err)
	}
	// So does a value of another type.
	_, err = sysmsg.ReplaceState(sys, pid, func(any) any { return "not a recorder" }, wait)
	if !errors.As(err, &ce) || !ce.Refused {
		t.Fatalf("ReplaceState with a string: %v", err)
	}
	v, err = sysmsg.GetState(sys, pid, wait)
	if err != nil || v != any(r2) {
		t.Fatalf("state after failed replaces: %v, %v; want the replaced one", v, err)
	}
	if n, err := actor.Call[int](sys, pid, "n", wait); err != nil || n != 42 {
		t.Fatalf("server after failed replaces answers %d, %v", n, err)
	}
}

func TestStopRunsTerminateWithTheReason(t *testing.T) {
	sys := start(t)
	for _, suspended := range []bool{false, true} {
		r := &recorder{term: make(chan actor.Reason, 1)}
		pid, _ := actor.StartServer(sys, r)
		if suspended {
			sysmsg.Suspend(sys, pid, wait)
		}
		reason := actor.Atom("going")
		if err := sysmsg.Stop(sys, pid, reason, wait); err != nil {
			t.Fatalf("Stop (suspended %v): %v", suspended, err)
		}
		select {
		case got := <-r.term:
			if got != reason {
				t.Fatalf("Terminate got %v, want %v", got, reason)
			}
		default:
			t.Fatalf("Stop returned before Terminate ran (suspended %v)", suspended)
		}
		if err := sysmsg.Stop(sys, pid, reason, wait); !errors.Is(err, actor.ErrNoProc) {
			t.Fatalf("Stop of a stopped server: %v, want ErrNoProc", err)
		}
	}
}

func TestStopFromAHandler(t *testing.T) {
	sys := start(t)
	r := &recorder{term: make(chan actor.Reason, 1)}
	pid, _ := actor.StartServer(sys, r)
	out := make(chan error, 1)
	stopper, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		out <- sysmsg.Stop(c, pid, nil, wait)
	}))
	sys.Send(stopper, "go")
	if err := <-out; err != nil {
		t.Fatal(err)
	}
	if got := <-r.term; got != actor.Normal {
		t.Fatalf("Terminate got %v", got)
	}
}

func TestStopReportsAnotherExitReason(t *testing.T) {
	sys := start(t)
	pid, _ := actor.StartServer(sys, &restopper{})
	err := sysmsg.Stop(sys, pid, actor.Normal, wait)
	var ce *actor.CallExitError
	if !errors.As(err, &ce) || ce.Reason != actor.Atom("other") {
		t.Fatalf("Stop of a server whose Terminate stops otherwise: %v", err)
	}
}

type restopper struct{ actor.ServerBase }

func (restopper) Terminate(c *actor.Context, _ actor.Reason) { c.Stop(actor.Atom("other")) }

func TestSysRequestsToAPlainActorAreNotServer(t *testing.T) {
	sys := start(t)
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if _, err := sysmsg.GetState(sys, pid, wait); !errors.Is(err, actor.ErrNotServer) {
		t.Fatalf("GetState of a plain actor: %v", err)
	}
	if err := sysmsg.Stop(sys, pid, nil, wait); !errors.Is(err, actor.ErrNotServer) {
		t.Fatalf("Stop of a plain actor: %v", err)
	}
}

// formatted shows only its public part in a status.
type formatted struct {
	actor.ServerBase
	public, secret string
}

func (f *formatted) FormatStatus() any { return "public=" + f.public }

func TestGetStatusShowsFormatStatus(t *testing.T) {
	sys := start(t)
	pid, _ := actor.StartServer(sys, &formatted{public: "p", secret: "s"}, actor.WithSpawn(actor.Name("fmt_srv")))
	st, err := sysmsg.GetStatus(sys, pid, wait)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != "public=p" || st.Name != "fmt_srv" || st.Pid != pid || st.Behaviour != "gen_server" ||
		st.Module != "*sysmsg_test.formatted" || st.Suspended || !st.Parent.IsZero() {
		t.Fatalf("status: %+v", st)
	}
	// Without the hook, the state's text.
	pid2, _ := actor.StartServer(sys, &recorder{n: 7})
	st, _ = sysmsg.GetStatus(sys, pid2, wait)
	if s, ok := st.State.(string); !ok || !strings.Contains(s, "n:7") {
		t.Fatalf("status state: %#v", st.State)
	}
}

func TestLogAndStatisticsRecordEvents(t *testing.T) {
	sys := start(t)
	pid, _ := actor.StartServer(sys, &recorder{})
	if err := sysmsg.Log(sys, pid, true, 0, wait); err != nil {
		t.Fatal(err)
	}
	if err := sysmsg.Statistics(sys, pid, true, wait); err != nil {
		t.Fatal(err)
	}
	actor.Cast(sys, pid, "c")
	sys.Call(pid, "q", wait)
	sys.Send(pid, "i")
	ev, err := sysmsg.GetLog(sys, pid, wait)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range ev {
		kinds = append(kinds, e.String())
	}
	want := []string{"got cast c", "new state", "got call q from", "sent 1 to", "got i", "new state"}
	if len(kinds) != len(want) {
		t.Fatalf("log: %q", kinds)
	}
	for i := range want {
		if !strings.HasPrefix(kinds[i], want[i]) {
			t.Fatalf("log event %d: %q, want %q... (all %q)", i, kinds[i], want[i], kinds)
		}
	}
	st, err := sysmsg.GetStatistics(sys, pid, wait)
	if err != nil || st == nil || st.In != 3 || st.Out != 1 || st.Now.Before(st.Start) {
		t.Fatalf("statistics: %+v, %v", st, err)
	}
	// The log keeps its last n.
	sysmsg.Log(sys, pid, true, 2, wait)
	for i := range 5 {
		actor.Cast(sys, pid, i)
	}
	ev, _ = sysmsg.GetLog(sys, pid, wait)
	if len(ev) != 2 || ev[0].Kind != actor.SysIn || ev[0].Msg != 4 || ev[1].Kind != actor.SysNoReply {
		t.Fatalf("log of 2: %v", ev)
	}
	sysmsg.NoDebug(sys, pid, wait)
	if st, _ := sysmsg.GetStatistics(sys, pid, wait); st != nil {
		t.Fatalf("statistics after NoDebug: %+v", st)
	}
	if ev, _ := sysmsg.GetLog(sys, pid, wait); len(ev) != 0 {
		t.Fatalf("log after NoDebug: %v", ev)
	}
}

func TestTraceWritesEachEvent(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	sys := testsys.Start(t, actor.Config{Logger: func(f string, a ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	pid, _ := actor.StartServer(sys, &recorder{}, actor.WithSpawn(actor.Name("traced")))
	sysmsg.Trace(sys, pid, true, wait)
	sys.Call(pid, "hi", wait)
	sysmsg.Trace(sys, pid, false, wait)
	sys.Call(pid, "unseen", wait)
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(lines, "\n")
	if !strings.Contains(got, "*DBG* traced got call hi from") || !strings.Contains(got, "*DBG* traced sent 0 to") ||
		strings.Contains(got, "unseen") {
		t.Fatalf("trace lines:\n%s", got)
	}
}

// typedSrv is a TypedServer.
type typedSrv struct {
	actor.ServerBase
	v int
}

func (s *typedSrv) HandleCall(c *actor.Context, q string, from actor.ReplyTo[int]) {
	from.Reply(c, s.v)
}

func TestTypedServerStateIsTheTypedServer(t *testing.T) {
	sys := start(t)
	ts := &typedSrv{v: 1}
	pid, _ := actor.StartServer(sys, actor.Typed[string, int, any](ts))
	v, err := sysmsg.GetState(sys, pid, wait)
	if err != nil || v != any(ts) {
		t.Fatalf("GetState of a Typed server: %v, %v", v, err)
	}
	if _, err := sysmsg.ReplaceState(sys, pid, func(any) any { return &typedSrv{v: 9} }, wait); err != nil {
		t.Fatal(err)
	}
	ref := actor.ServerRef[string, int, any]{Pid: pid}
	if n, err := ref.Call(sys, "v", wait); err != nil || n != 9 {
		t.Fatalf("after ReplaceState: %d, %v", n, err)
	}
}

func TestSupervisorAnswersSystemMessages(t *testing.T) {
	sys := start(t)
	sup, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{{
		ID:    "w",
		Start: func(c *actor.Context, _ ...any) (actor.Pid, error) { return actor.SpawnServer(c, &recorder{}) },
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sysmsg.Suspend(sys, sup, wait); err != nil {
		t.Fatal(err)
	}
	st, err := sysmsg.GetStatus(sys, sup, wait)
	if err != nil || !st.Suspended || st.Behaviour != "gen_server" {
		t.Fatalf("supervisor status: %+v, %v", st, err)
	}
	if want := "strategy one_for_one, children [w <"; !strings.HasPrefix(fmt.Sprint(st.State), want) ||
		!strings.HasSuffix(fmt.Sprint(st.State), "], 0 dynamic") {
		t.Fatalf("supervisor status state: %v", st.State)
	}
	if err := sysmsg.Resume(sys, sup, wait); err != nil {
		t.Fatal(err)
	}
	if ch, err := supervisor.WhichChildren(sys, sup); err != nil || len(ch) != 1 {
		t.Fatalf("WhichChildren after Resume: %v, %v", ch, err)
	}
	if err := sysmsg.Stop(sys, sup, actor.Shutdown, wait); err != nil {
		t.Fatal(err)
	}
}

func TestSuspendedServerStopsOnItsParentsExit(t *testing.T) {
	sys := start(t)
	r := &recorder{term: make(chan actor.Reason, 1)}
	pid, _ := actor.StartServer(sys, r) // traps exits; its parent is the System
	sysmsg.Suspend(sys, pid, wait)
	actor.Cast(sys, pid, "queued")
	sys.Exit(pid, actor.Shutdown)
	select {
	case got := <-r.term:
		if got != actor.Shutdown {
			t.Fatalf("Terminate got %v", got)
		}
	case <-time.After(wait):
		t.Fatal("a suspended server ignored its parent's exit")
	}
	if len(r.seen) != 0 {
		t.Fatalf("the suspended server handled %v", r.seen)
	}
}

func TestStopServerStopsASuspendedServer(t *testing.T) {
	sys := start(t)
	r := &recorder{term: make(chan actor.Reason, 1)}
	pid, _ := actor.StartServer(sys, r)
	sysmsg.Suspend(sys, pid, wait)
	actor.Cast(sys, pid, "queued")
	if err := actor.StopServer(sys, pid, actor.Shutdown, wait); err != nil {
		t.Fatal(err)
	}
	if got := <-r.term; got != actor.Shutdown || len(r.seen) != 0 {
		t.Fatalf("Terminate got %v after handling %v", got, r.seen)
	}
}

func TestTerminateAnswersBeforeTerminateRuns(t *testing.T) {
	sys := start(t)
	// Terminate calls the stopper back: it can answer only because the
	// terminate request was answered before Terminate ran.
	out := make(chan error, 1)
	stopper, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if pid, ok := m.(actor.Pid); ok {
			_, err := actor.SysCall(c, pid, actor.SysRequest{Op: actor.SysTerminate}, wait)
			out <- err
			if req, err := c.Receive(func(m any) bool { _, ok := m.(actor.Request); return ok }, wait); err == nil {
				c.Reply(req.(actor.Request), "bye")
			}
		}
	}))
	done := make(chan any, 1)
	pid, _ := actor.StartServer(sys, &callsBack{to: stopper, done: done})
	sys.Send(stopper, pid)
	if err := <-out; err != nil {
		t.Fatal(err)
	}
	if v := <-done; v != "bye" {
		t.Fatalf("Terminate's call got %v", v)
	}
}

type callsBack struct {
	actor.ServerBase
	to   actor.Pid
	done chan any
}

func (s *callsBack) Terminate(c *actor.Context, _ actor.Reason) {
	v, err := c.Call(s.to, "terminating", wait)
	if err != nil {
		v = err
	}
	s.done <- v
}
