package supervisor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// lockedBuf is a bytes.Buffer safe for the concurrent writes of a slog handler.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) string() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuf) records(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad JSON record %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

type nu14Crasher struct{ actor.ServerBase }

func (nu14Crasher) HandleCast(c *actor.Context, msg any) {
	if msg == "boom" {
		panic("nu14 boom")
	}
}

// An operator's view of the logs of a crash loop: a supervised server
// panics twice; intensity 1 lets one restart, the second crash makes the
// supervisor give up. Each event is one slog record, the panic's with its
// stack; nothing is reported twice.
func TestNewUser14CrashLoopReports(t *testing.T) {
	var buf lockedBuf
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	sys := testsys.Start(t, actor.Config{Logger: actor.SlogLogger(logger)})
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Name:      "nu14sup",
		Intensity: 1, Period: time.Minute,
		Children: []supervisor.ChildSpec{{
			ID:    "crasher",
			Start: supervisor.ServerStart(func(...any) actor.Server { return nu14Crasher{} }, actor.WithSpawn(actor.Name("nu14crasher"))),
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
			p, ok := sys.Whereis("nu14crasher")
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
	if n := count("actor nu14crasher <"); n != 2 {
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
			if !strings.Contains(d, "nu14Crasher.HandleCast") {
				t.Errorf("crash report's stack lacks the handler's frame: %q", d)
			}
		}
	}
}

// nu14Worker traps exits and, in Terminate, prints its stop and then waits
// stopFor (in the runtime, so a kill can end it).
type nu14Worker struct {
	actor.ServerBase
	id      string
	stopFor time.Duration
	out     func(string)
}

func (w *nu14Worker) Init(c *actor.Context) error {
	c.TrapExit(true)
	w.out("started " + w.id)
	return nil
}

func (w *nu14Worker) Terminate(c *actor.Context, r actor.Reason) {
	w.out(fmt.Sprintf("stopping %s %v", w.id, r))
	if w.stopFor > 0 {
		c.Sleep(w.stopFor)
	}
	w.out("stopped " + w.id)
}

func nu14Tree(out func(string), slow time.Duration) supervisor.Spec {
	kid := func(id string, stopFor, shutdown time.Duration) supervisor.ChildSpec {
		return supervisor.ChildSpec{ID: id, Shutdown: shutdown, Start: supervisor.ServerStart(func(...any) actor.Server {
			return &nu14Worker{id: id, stopFor: stopFor, out: out}
		})}
	}
	return supervisor.Spec{
		Strategy: supervisor.OneForOne,
		Name:     "nu14top",
		Children: []supervisor.ChildSpec{
			kid("a", 0, 0),
			supervisor.Child("sub", supervisor.Spec{Children: []supervisor.ChildSpec{kid("b1", 0, 0), kid("b2", 0, 0)}}),
			kid("slow", slow, 200*time.Millisecond), // killed after 200 ms
			kid("c", 0, 0),
		},
	}
}

// The process a service's main is: supervisor.Run under SIGTERM.
func TestNewUser14RunSubprocess(t *testing.T) {
	if os.Getenv("NU14_CHILD") == "1" {
		out := func(s string) { fmt.Println(s) }
		err := supervisor.Run(context.Background(), actor.Config{}, nu14Tree(out, time.Hour), 5*time.Second)
		fmt.Printf("run returned %v\n", err)
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNewUser14RunSubprocess$")
	cmd.Env = append(os.Environ(), "NU14_CHILD=1")
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
	case <-time.After(10 * time.Second):
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
	if took < 200*time.Millisecond || took > 3*time.Second {
		t.Errorf("stop took %v; want the slow child's 200 ms shutdown timeout and little more", took)
	}
}

// Shutdown with a ctx shorter than a child's shutdown timeout: what is left
// is killed, Shutdown returns the ctx error, and no goroutine is left.
func TestNewUser14ShutdownShortCtx(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	out := func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }
	spec := nu14Tree(out, time.Hour)
	spec.Children[2].Shutdown = supervisor.Infinity // never killed by its supervisor
	sup, err := supervisor.Start(sys, spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err = sys.Shutdown(ctx)
	took := time.Since(t0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the ctx's DeadlineExceeded", err)
	}
	if took > 2*time.Second {
		t.Errorf("Shutdown took %v with a 300 ms ctx", took)
	}
	if sys.Alive(sup) || sys.Stats().Live != 0 {
		t.Errorf("after Shutdown: sup alive %v, %d live", sys.Alive(sup), sys.Stats().Live)
	}
	// A second Shutdown returns what the first did.
	if err2 := sys.Shutdown(context.Background()); !errors.Is(err2, context.DeadlineExceeded) {
		t.Errorf("second Shutdown = %v", err2)
	}
	mu.Lock()
	t.Logf("took %v; %q", took, lines)
	mu.Unlock()
}

type nu14Looper struct{ actor.ServerBase }

func (nu14Looper) Init(c *actor.Context) error {
	actor.Cast(c, c.Self(), "boom")
	return nil
}

func (nu14Looper) HandleCast(c *actor.Context, msg any) { panic("nu14 loop") }

// A crash loop under RunSystem: the service's main gets ErrGaveUp (to exit
// non-zero), the System is shut down, and the log holds one intensity report.
func TestNewUser14RunSystemGaveUp(t *testing.T) {
	var buf lockedBuf
	sys, err := actor.Start(actor.Config{Logger: actor.SlogLogger(slog.New(slog.NewJSONHandler(&buf, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	err = supervisor.RunSystem(context.Background(), sys, supervisor.Spec{
		Intensity: 3, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "looper", Start: supervisor.ServerStart(func(...any) actor.Server { return nu14Looper{} })}},
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
