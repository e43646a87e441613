package supervisor_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testlog"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// A supervisor reports through the System's Logger what OTP's supervisor
// reports: child_terminated for any exit of a permanent child and an
// abnormal one of any other, start_error for a failed restart, and
// shutdown when the restart intensity is exceeded. It reported nothing.
func TestSupervisorReports(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	logged := func(sub string) int { return len(sink.Matching(sub)) }
	started := 0
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy:  supervisor.OneForOne,
		Intensity: 2, Period: time.Minute,
		Children: []supervisor.ChildSpec{
			{ID: "quiet", Restart: supervisor.Transient, Start: supervisor.ServerStart(func(...any) actor.Server { return stopper{} })},
			{ID: "perm", Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
				if started++; started == 3 {
					return actor.Pid{}, fmt.Errorf("no resources")
				}
				return actor.SpawnServer(c, stopper{})
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	child := func(id string) actor.Pid {
		kids, err := supervisor.WhichChildren(sys, sup)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range kids {
			if ch.ID == id {
				return ch.Pid
			}
		}
		t.Fatalf("no child %s", id)
		return actor.Pid{}
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("no report of %s; logged %q", what, sink.All())
			}
			time.Sleep(time.Millisecond)
		}
	}
	// A transient child that stops normally: no report.
	actor.Cast(sys, child("quiet"), actor.Normal)
	// A permanent child that stops normally is reported (and restarted).
	actor.Cast(sys, child("perm"), actor.Normal)
	wait("the permanent child's exit", func() bool { return logged("child perm") == 1 })
	// It crashes: reported; its restart fails (start 3): start error,
	// retried; the retry's restart is the third in the period: shutdown.
	actor.Cast(sys, child("perm"), actor.Atom("boom"))
	wait("the crash", func() bool { return logged("terminated: boom") == 1 })
	wait("the failed restart", func() bool { return logged("failed to restart: no resources") == 1 })
	wait("the give-up", func() bool { return logged("reached max restart intensity") == 1 })
	// The supervisor has stopped, so it handled the transient child's exit.
	if n := logged("child quiet"); n != 0 {
		t.Fatalf("a transient child's normal exit was reported %d times", n)
	}
}

// TestSupervisorKilledReportsNothing: a supervisor killed while its handler
// runs (here: in a restart's StartFunc) writes no report afterwards, as the
// runtime writes none for what a killed actor's handler does while it runs
// on (Config.Logger); in OTP a killed supervisor is gone and reports
// nothing. Its orphaned handler went on to report the restart as failed
// (start_error: noproc, the StartFunc's spawn refused to a dead parent).
func TestSupervisorKilledReportsNothing(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	inStart, release := make(chan struct{}), make(chan struct{})
	starts := 0
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.OneForOne,
		Children: []supervisor.ChildSpec{{ID: "w", Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
			if starts++; starts == 2 {
				close(inStart)
				<-release
			}
			return actor.SpawnServer(c, stopper{})
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := supervisor.WhichChildren(sys, sup)
	if err != nil {
		t.Fatal(err)
	}
	actor.Cast(sys, kids[0].Pid, actor.Atom("boom"))
	<-inStart
	sys.Exit(sup, actor.Kill)
	close(release)
	// Once the orphaned handler has returned nothing is left running.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sink.Matching("supervisor"); len(got) != 1 || !strings.Contains(got[0], "terminated: boom") {
		t.Fatalf("reports %q, want only the crash's", got)
	}
}

// TestSupervisorInitStartErrorReported: a child that fails to start while
// the supervisor starts is reported (OTP 25's start_children writes the
// start_error report before init fails with failed_to_start_child), as a
// failed restart is. Only restarts were reported.
func TestSupervisorInitStartErrorReported(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	_, err := supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.OneForOne,
		Children: []supervisor.ChildSpec{{ID: "w", Start: func(*actor.Context, ...any) (actor.Pid, error) {
			return actor.Pid{}, fmt.Errorf("no resources")
		}}},
	})
	if err == nil {
		t.Fatal("the supervisor started")
	}
	if got := sink.Matching("child w failed to start: no resources"); len(got) != 1 {
		t.Fatalf("reports %q, want one start error for w", sink.All())
	}
}

// TestSupervisorSiblingsNotReported: a one_for_all restart stops the
// siblings itself; only the exit that triggered it is reported.
func TestSupervisorSiblingsNotReported(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	w := func(id string) supervisor.ChildSpec {
		return supervisor.ChildSpec{ID: id, Start: supervisor.ServerStart(func(...any) actor.Server { return stopper{} })}
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.OneForAll,
		Children: []supervisor.ChildSpec{w("a"), w("b"), w("c")},
	})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := supervisor.WhichChildren(sys, sup)
	if err != nil {
		t.Fatal(err)
	}
	actor.Cast(sys, kids[1].Pid, actor.Atom("boom"))
	for {
		now, err := supervisor.WhichChildren(sys, sup)
		if err != nil {
			t.Fatal(err)
		}
		if now[0].Pid != kids[0].Pid && now[2].Pid != kids[2].Pid && !now[1].Pid.IsZero() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if got := sink.Matching("supervisor"); len(got) != 1 || !strings.Contains(got[0], "child b") {
		t.Fatalf("reports %q, want only b's", got)
	}
}

// A named supervisor's reports name it, as OTP's ({local, Name}); an
// operator reading the log had only a pid to go by.
func TestSupervisorReportNamesNamedSupervisor(t *testing.T) {
	var sink testlog.Sink
	sys := testsys.Start(t, actor.Config{Logger: sink.Log})
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Name:     "db_sup",
		Children: []supervisor.ChildSpec{{ID: "conn", Start: supervisor.ServerStart(func(...any) actor.Server { return stopper{} })}},
	})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := supervisor.WhichChildren(sys, sup)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %v, %v", kids, err)
	}
	sys.Exit(kids[0].Pid, actor.Kill)
	want := fmt.Sprintf("supervisor db_sup %v: child conn", sup)
	deadline := time.Now().Add(5 * time.Second)
	for len(sink.Matching(want)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no report naming the supervisor (%q); logged %q", want, sink.All())
		}
		time.Sleep(time.Millisecond)
	}
}

// An operator's view of the logs of a crash loop: a supervised server
// panics twice; intensity 1 lets one restart, the second crash makes the
// supervisor give up. Each event is one slog record, the panic's with its
// stack; nothing is reported twice.
func TestCrashLoopReportsEachEventOnce(t *testing.T) {
	var buf lockedBuf
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	sys := testsys.Start(t, actor.Config{Logger: actor.SlogLogger(logger)})
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Name:      "loopsup",
		Intensity: 1, Period: time.Minute,
		Children: []supervisor.ChildSpec{{
			ID:    "crasher",
			Start: supervisor.ServerStart(func(...any) actor.Server { return crashOnBoom{} }, actor.WithSpawn(actor.Name("loopcrasher"))),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := sys.Monitor(sup)
	for i := 0; i < 2; i++ {
		var pid actor.Pid
		deadline := time.Now().Add(5 * time.Second)
		for {
			p, ok := sys.Whereis("loopcrasher")
			if ok && sys.Alive(p) {
				pid = p
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("crasher not running")
			}
			time.Sleep(time.Millisecond)
		}
		cw, _ := sys.Monitor(pid)
		actor.Cast(sys, pid, "boom")
		<-cw.Done()
	}
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("supervisor did not give up")
	}
	// The records come from the actors' deaths, after them: wait for the
	// five, then a moment more for a duplicate.
	deadline := time.Now().Add(10 * time.Second)
	for len(buf.records(t)) < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	recs := buf.records(t)
	var msgs []string
	for _, r := range recs {
		if r["level"] != "ERROR" {
			t.Errorf("record at level %v: %v", r["level"], r)
		}
		msgs = append(msgs, r["msg"].(string))
	}
	count := func(sub string) int {
		n := 0
		for _, m := range msgs {
			if strings.Contains(m, sub) {
				n++
			}
		}
		return n
	}
	if n := count("actor loopcrasher <"); n != 2 {
		t.Errorf("%d crash reports naming the actor, want 2: %q", n, msgs)
	}
	if n := count("child crasher"); n != 3 {
		t.Errorf("%d supervisor reports about the child, want 2 terminated + 1 shutdown: %q", n, msgs)
	}
	if n := count("reached max restart intensity"); n != 1 {
		t.Errorf("%d intensity reports, want 1: %q", n, msgs)
	}
	if len(msgs) != 5 {
		t.Errorf("%d records, want 5 (no duplicates): %q", len(msgs), msgs)
	}
	for _, r := range recs {
		if strings.Contains(r["msg"].(string), "panicked") && strings.HasPrefix(r["msg"].(string), "actor ") {
			d, _ := r["detail"].(string)
			if !strings.Contains(d, "crashOnBoom.HandleCast") {
				t.Errorf("crash report's stack lacks the handler's frame: %q", d)
			}
		}
	}
}
