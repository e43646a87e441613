//go:build unix

package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// runLog records what the tree's workers did, in order.
type runLog struct {
	mu  sync.Mutex
	ev  []string
	run chan struct{} // closed when the last child has started
}

func (l *runLog) add(s string) {
	l.mu.Lock()
	l.ev = append(l.ev, s)
	l.mu.Unlock()
}

func (l *runLog) events() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ev)
}

// trapper traps exits so that its supervisor's shutdown reaches Terminate.
type trapper struct {
	actor.ServerBase
	id   string
	log  *runLog
	last bool
}

func (s trapper) Init(c *actor.Context) error {
	c.TrapExit(true)
	s.log.add("start " + s.id)
	if s.last {
		close(s.log.run)
	}
	return nil
}

func (s trapper) Terminate(c *actor.Context, reason actor.Reason) {
	s.log.add(fmt.Sprintf("stop %s %v", s.id, reason))
}

func runSpec(log *runLog) supervisor.Spec {
	var cs []supervisor.ChildSpec
	for i, id := range []string{"a", "b", "c"} {
		s := trapper{id: id, log: log, last: i == 2}
		cs = append(cs, supervisor.ChildSpec{ID: id, Start: supervisor.ServerStart(func(...any) actor.Server { return s })})
	}
	return supervisor.Spec{Strategy: supervisor.OneForOne, Children: cs}
}

var wantRunLog = []string{"start a", "start b", "start c", "stop c shutdown", "stop b shutdown", "stop a shutdown"}

// TestRunStopsOnContext: Run starts the tree, and when its context ends it
// stops the tree in reverse start order, each child seeing Shutdown.
func TestRunStopsOnContext(t *testing.T) {
	log := &runLog{run: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- supervisor.Run(ctx, actor.Config{Schedulers: 2}, runSpec(log), 5*time.Second) }()
	waitClosed(t, log.run)
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := log.events(); !slices.Equal(got, wantRunLog) {
		t.Fatalf("events %q, want %q", got, wantRunLog)
	}
}

// TestRunStopsOnSIGTERM: the same on a SIGTERM sent to the process.
func TestRunStopsOnSIGTERM(t *testing.T) {
	log := &runLog{run: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- supervisor.Run(context.Background(), actor.Config{Schedulers: 2}, runSpec(log), 5*time.Second)
	}()
	waitClosed(t, log.run)
	// Run registered for SIGTERM before it started the tree, so the signal
	// is caught, not fatal.
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitErr(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := log.events(); !slices.Equal(got, wantRunLog) {
		t.Fatalf("events %q, want %q", got, wantRunLog)
	}
}

// crasher dies right after it starts.
type crasher struct{ actor.ServerBase }

func (crasher) Init(c *actor.Context) error {
	c.Send(c.Self(), "crash")
	return nil
}

func (crasher) HandleInfo(c *actor.Context, msg any) { panic("crash") }

// TestRunReturnsWhenTopGivesUp: a child that keeps crashing exhausts the top
// supervisor's intensity; Run notices the top is gone and returns
// ErrGaveUp, so a crash-looping service exits with an error.
func TestRunReturnsWhenTopGivesUp(t *testing.T) {
	spec := supervisor.Spec{Children: []supervisor.ChildSpec{
		{ID: "x", Start: supervisor.ServerStart(func(...any) actor.Server { return crasher{} })},
	}}
	done := make(chan error, 1)
	go func() { done <- supervisor.Run(context.Background(), actor.Config{Schedulers: 2}, spec, 5*time.Second) }()
	if err := waitErr(t, done); !errors.Is(err, supervisor.ErrGaveUp) {
		t.Fatalf("Run of a crash-looping tree: %v, want ErrGaveUp (it returned nil)", err)
	}
}

// TestRunStartError: a tree that cannot start is Run's error.
func TestRunStartError(t *testing.T) {
	failing := func(c *actor.Context, args ...any) (actor.Pid, error) { return actor.Pid{}, fmt.Errorf("no") }
	spec := supervisor.Spec{Children: []supervisor.ChildSpec{{ID: "x", Start: failing}}}
	err := supervisor.Run(context.Background(), actor.Config{}, spec, time.Second)
	if err == nil {
		t.Fatal("Run of a tree that cannot start returned nil")
	}
}

func waitClosed(t *testing.T, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the tree did not start")
	}
}

func waitErr(t *testing.T, ch chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

func TestRunNilContext(t *testing.T) {
	//lint:ignore SA1012 a nil Context is the bad input under test
	if err := supervisor.Run(nil, actor.Config{}, supervisor.Spec{}, time.Second); !errors.Is(err, actor.ErrNilContext) {
		t.Fatalf("Run(nil, ...): %v, want ErrNilContext", err)
	}
}

func TestStartNilSystem(t *testing.T) {
	if _, err := supervisor.Start(nil, supervisor.Spec{}); !errors.Is(err, actor.ErrNilSystem) {
		t.Fatalf("Start(nil, ...): %v, want ErrNilSystem", err)
	}
}

// finisher stops normally right after it starts.
type finisher struct{ actor.ServerBase }

func (finisher) Init(c *actor.Context) error {
	c.Send(c.Self(), "done")
	return nil
}

func (finisher) HandleInfo(c *actor.Context, msg any) { c.Stop(actor.Normal) }

// TestRunAutoShutdownIsNormal: a tree that ends by auto_shutdown (its
// significant child finished) is a normal end: Run returns nil, not
// ErrGaveUp; a hook the caller set still runs.
func TestRunAutoShutdownIsNormal(t *testing.T) {
	var exited atomic.Int32
	spec := supervisor.Spec{
		AutoShutdown: supervisor.AnySignificant,
		Hooks:        &supervisor.Hooks{ChildExited: func(actor.Pid, string, actor.Pid, actor.Reason, bool) { exited.Add(1) }},
		Children: []supervisor.ChildSpec{
			{ID: "job", Restart: supervisor.Transient, Significant: true, Start: supervisor.ServerStart(func(...any) actor.Server { return finisher{} })},
		},
	}
	done := make(chan error, 1)
	go func() { done <- supervisor.Run(context.Background(), actor.Config{Schedulers: 2}, spec, 5*time.Second) }()
	if err := waitErr(t, done); err != nil {
		t.Fatalf("Run of a tree ended by auto_shutdown: %v, want nil", err)
	}
	if exited.Load() != 1 {
		t.Fatalf("the caller's ChildExited hook ran %d times, want 1", exited.Load())
	}
}

// TestRunSystemLeavesTheSystemReachable: RunSystem runs the tree on a
// System the caller started, which code outside the tree can call while it
// runs (Run hid it), and shuts it down at the end.
func TestRunSystemLeavesTheSystemReachable(t *testing.T) {
	sys, err := actor.Start(actor.Config{Schedulers: 2})
	if err != nil {
		t.Fatal(err)
	}
	log := &runLog{run: make(chan struct{})}
	spec := runSpec(log)
	spec.Name = "top"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- supervisor.RunSystem(ctx, sys, spec, 5*time.Second) }()
	waitClosed(t, log.run)
	counts, err := supervisor.CountChildren(sys, mustWhereis(t, sys, "top"))
	if err != nil || counts.Active != 3 {
		t.Fatalf("CountChildren from outside while it runs: %+v, %v", counts, err)
	}
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatalf("RunSystem: %v", err)
	}
	if got := log.events(); !slices.Equal(got, wantRunLog) {
		t.Fatalf("events %q, want %q", got, wantRunLog)
	}
	if _, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {})); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("Spawn after RunSystem returned: %v, want ErrStopped", err)
	}
	if err := supervisor.RunSystem(context.Background(), nil, spec, time.Second); !errors.Is(err, actor.ErrNilSystem) {
		t.Fatalf("RunSystem of a nil System: %v", err)
	}
}

func mustWhereis(t *testing.T, sys *actor.System, name string) actor.Pid {
	t.Helper()
	pid, ok := sys.Whereis(name)
	if !ok {
		t.Fatalf("no %s", name)
	}
	return pid
}

// The process a service's main is: supervisor.Run under SIGTERM.
func TestRunAsAServiceMainUnderSIGTERM(t *testing.T) {
	if os.Getenv("SUPERVISOR_RUN_CHILD") == "1" {
		out := func(s string) { fmt.Println(s) }
		// A minute to stop in: only the slow child's 200 ms shutdown
		// timeout ends its hour's sleep, so a stop that waits it out, or
		// the whole stop timeout, shows as a child that does not exit.
		err := supervisor.Run(context.Background(), actor.Config{}, serviceTree(out, time.Hour), time.Minute)
		fmt.Printf("run returned %v\n", err)
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunAsAServiceMainUnderSIGTERM$")
	cmd.Env = append(os.Environ(), "SUPERVISOR_RUN_CHILD=1")
	var out lockedBuf
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.string(), "started c") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("tree did not start: %q", out.string())
		}
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("child exited: %v", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("child did not exit after SIGTERM")
	}
	took := time.Since(t0)
	var stops []string
	for _, l := range strings.Split(out.string(), "\n") {
		if strings.HasPrefix(l, "stopping ") || strings.HasPrefix(l, "stopped ") || strings.HasPrefix(l, "run returned") {
			stops = append(stops, l)
		}
	}
	want := []string{
		"stopping c shutdown", "stopped c",
		"stopping slow shutdown", // killed in its Sleep: no "stopped slow"
		"stopping b2 shutdown", "stopped b2",
		"stopping b1 shutdown", "stopped b1",
		"stopping a shutdown", "stopped a",
		"run returned <nil>",
	}
	if strings.Join(stops, "|") != strings.Join(want, "|") {
		t.Errorf("stop sequence:\n got %q\nwant %q\nfull output:\n%s", stops, want, out.string())
	}
	// Far below the stop timeout's minute, with room for a loaded machine.
	if took < 200*time.Millisecond || took > 10*time.Second {
		t.Errorf("stop took %v; want the slow child's 200 ms shutdown timeout and little more", took)
	}
}

type crashLooper struct{ actor.ServerBase }

func (crashLooper) Init(c *actor.Context) error {
	actor.Cast(c, c.Self(), "boom")
	return nil
}

func (crashLooper) HandleCast(c *actor.Context, msg any) { panic("crash loop") }

// A crash loop under RunSystem: the service's main gets ErrGaveUp (to exit
// non-zero), the System is shut down, and the log holds one intensity report.
func TestRunSystemCrashLoopIsErrGaveUp(t *testing.T) {
	var buf lockedBuf
	sys, err := actor.Start(actor.Config{Logger: actor.SlogLogger(slog.New(slog.NewJSONHandler(&buf, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	err = supervisor.RunSystem(context.Background(), sys, supervisor.Spec{
		Intensity: 3, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "looper", Start: supervisor.ServerStart(func(...any) actor.Server { return crashLooper{} })}},
	}, time.Second)
	if !errors.Is(err, supervisor.ErrGaveUp) {
		t.Fatalf("RunSystem = %v, want ErrGaveUp", err)
	}
	if _, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {})); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("System not shut down: Spawn = %v", err)
	}
	var crashes, terminated, gaveUp int
	for _, r := range buf.records(t) {
		m := r["msg"].(string)
		switch {
		case strings.HasPrefix(m, "actor "):
			crashes++
		case strings.Contains(m, "terminated"):
			terminated++
		case strings.Contains(m, "max restart intensity"):
			gaveUp++
		}
	}
	if crashes != 4 || terminated != 4 || gaveUp != 1 {
		t.Errorf("reports: %d crashes, %d terminated, %d gave up; want 4, 4, 1:\n%s", crashes, terminated, gaveUp, buf.string())
	}
}
