package supervisor_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testlog"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// shutdownErrors records Hooks.ShutdownError's calls.
type shutdownErrors struct {
	mu  sync.Mutex
	got []string
}

func (h *shutdownErrors) hooks() *supervisor.Hooks {
	return &supervisor.Hooks{ShutdownError: func(_ actor.Pid, id string, pid actor.Pid, r actor.Reason) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.got = append(h.got, fmt.Sprintf("%s %v %v", id, pid, r))
	}}
}

func (h *shutdownErrors) calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// stall traps exits and takes far longer than its shutdown timeout to stop.
type stall struct{ actor.ServerBase }

func (stall) Init(c *actor.Context) error                { c.TrapExit(true); return nil }
func (stall) Terminate(c *actor.Context, _ actor.Reason) { c.Sleep(time.Minute) }

// TestShutdownErrorKilledReported: a child that outlives its shutdown
// timeout is killed, and the supervisor reports it (OTP 25's supervisor
// report shutdown_error, reason killed). It was killed without a word.
func TestShutdownErrorKilledReported(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	var hk shutdownErrors
	sup, err := supervisor.Start(sys, supervisor.Spec{Hooks: hk.hooks(), Children: []supervisor.ChildSpec{
		{ID: "slow", Shutdown: 20 * time.Millisecond, Start: supervisor.ServerStart(func(...any) actor.Server { return stall{} })},
		{ID: "quick", Shutdown: time.Second, Start: supervisor.ServerStart(func(...any) actor.Server { return stopper{} })},
	}})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := supervisor.WhichChildren(sys, sup)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"slow", "quick"} {
		if err := supervisor.TerminateChild(sys, sup, id); err != nil {
			t.Fatal(err)
		}
	}
	// The hook is called once, for slow, with its pid and killed.
	if got, want := hk.calls(), []string{fmt.Sprintf("slow %v killed", kids[0].Pid)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Hooks.ShutdownError calls %q, want %q", got, want)
	}
	got := sink.Matching("supervisor")
	if len(got) != 1 || !strings.Contains(got[0], "child slow") || !strings.Contains(got[0], "shutdown error: killed") {
		t.Fatalf("reports %q, want one shutdown error (killed) for slow", got)
	}
}

// TestShutdownErrorOvertakenCrashReported: a child that crashed while the
// supervisor was busy, and that the supervisor then stops (here by
// TerminateChild, queued before the crash's Exit), is reported with its
// crash reason, as OTP 25's shutdown/2 takes the reason from the child's
// 'EXIT' and reports shutdown_error. The Exit was left in the mailbox and
// then ignored as from an unknown pid: the supervisor never reported the
// crash (only the child's own crash report was written).
func TestShutdownErrorOvertakenCrashReported(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	var entered, proceed atomic.Bool
	sup, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{
		{ID: "b", Start: supervisor.ServerStart(func(...any) actor.Server { return stopper{} })},
	}})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := supervisor.WhichChildren(sys, sup)
	if err != nil {
		t.Fatal(err)
	}
	b := kids[0].Pid
	// Hold the supervisor in a StartFunc; Sleep leaves its mailbox alone.
	started := make(chan error, 1)
	go func() {
		_, err := supervisor.StartChild(sys, sup, supervisor.ChildSpec{ID: "x", Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
			entered.Store(true)
			// Until the test says b is dead, and the request and b's Exit
			// are queued (the handler's own count: the StartChild request
			// it handles is not in it).
			for !proceed.Load() || mailboxLen(c) < 2 {
				c.Sleep(time.Millisecond)
			}
			return actor.SpawnServer(c, stopper{})
		}})
		started <- err
	}()
	waitFor(t, "the supervisor to enter the StartFunc", entered.Load)
	defer proceed.Store(true) // a failed test must not leave it there
	// The TerminateChild call is made by an actor: once its handler waits
	// in the call, the request is in the supervisor's mailbox. (System.Info's
	// MailboxLen of 1 did not say so: the count goes up before the push, so
	// b's Exit could overtake a request still being pushed, and between two
	// Sleeps it also counts the StartChild request the handler has taken:
	// b's crash was reported as child_terminated 1 run in 20 with both
	// cores busy.)
	terminated := make(chan error, 1)
	calling := make(chan struct{})
	caller, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		close(calling)
		terminated <- supervisor.TerminateChild(c, sup, "b")
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(caller, "go")
	<-calling
	waitFor(t, "the TerminateChild call to be queued", func() bool {
		info, err := sys.Info(caller)
		return err == nil && (info.State == "parked" || info.State == "blocked")
	})
	bDown, err := sys.Monitor(b)
	if err != nil {
		t.Fatal(err)
	}
	actor.Cast(sys, b, actor.Atom("boom"))
	<-bDown.Done()
	proceed.Store(true)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if err := <-terminated; err != nil {
		t.Fatal(err)
	}
	// One more call: the supervisor has handled everything queued before it.
	if _, err := supervisor.WhichChildren(sys, sup); err != nil {
		t.Fatal(err)
	}
	if got := sink.Matching("supervisor"); len(got) != 1 || !strings.Contains(got[0], "child b") || !strings.Contains(got[0], "shutdown error: boom") {
		t.Fatalf("reports %q, want one supervisor report of b's crash (boom)", got)
	}
}

// mailboxLen is the calling actor's own count of its queued messages.
func mailboxLen(c *actor.Context) int {
	info, err := c.Info()
	if err != nil {
		return 0
	}
	return info.MailboxLen
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestShutdownErrorDynamicReported: the same for simple_one_for_one
// children stopped together when their supervisor stops: one report per
// reason, as OTP 25's terminate_dynamic_children writes.
func TestShutdownErrorDynamicReported(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	var hk shutdownErrors
	sup, err := supervisor.Start(sys, supervisor.Spec{Strategy: supervisor.SimpleOneForOne, Hooks: hk.hooks(), Children: []supervisor.ChildSpec{
		{ID: "d", Shutdown: 20 * time.Millisecond, Start: supervisor.ServerStart(func(...any) actor.Server { return stall{} })},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for i := 0; i < 2; i++ {
		pid, err := supervisor.StartChildArgs(sys, sup)
		if err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprintf("d %v killed", pid)] = true
	}
	sys.Exit(sup, actor.Shutdown)
	waitFor(t, "the supervisor to stop", func() bool { return !sys.Alive(sup) })
	// One hook call per child (the report is one per reason).
	if got := hk.calls(); len(got) != 2 || !want[got[0]] || !want[got[1]] || got[0] == got[1] {
		t.Errorf("Hooks.ShutdownError calls %q, want one per child, killed", got)
	}
	got := sink.Matching("supervisor")
	if len(got) != 1 || !strings.Contains(got[0], "child d") || !strings.Contains(got[0], "shutdown error: killed") {
		t.Fatalf("reports %q, want one shutdown error (killed) for d", got)
	}
}
