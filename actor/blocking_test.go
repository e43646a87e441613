package actor_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestBlockingHandsTheRoleOn: f runs off the scheduler; on one scheduler
// another actor runs while f blocks, the handler gets f's result, and the
// watchdog retakes nothing (without Blocking, a handler had no supported
// way to block but to trip the watchdog).
func TestBlockingHandsTheRoleOn(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	release := make(chan struct{})
	result := make(chan any, 1)
	blocker, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		v, err := c.Blocking(func() (any, error) {
			<-release // blocked outside the runtime
			return 42, nil
		}, 10*time.Second)
		if err != nil {
			result <- err
			return
		}
		result <- v
	}))
	ran := make(chan struct{})
	other, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) { close(ran) }))
	sys.Send(blocker, "go")
	sys.Send(other, "go")
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the other actor did not run while f blocked")
	}
	// Past WatchdogThreshold with f still blocked: a retake would show in
	// Stats (checked below). Letting time pass is the test: the handler
	// has handed its role on, so a retake is a bug at any machine speed.
	time.Sleep(30 * time.Millisecond)
	close(release)
	select {
	case v := <-result:
		if v != 42 {
			t.Fatalf("Blocking returned %v, want 42", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no result")
	}
	for i, s := range sys.Stats().Schedulers {
		if s.Retakes != 0 {
			t.Errorf("scheduler %d: %d retakes", i, s.Retakes)
		}
	}
}

// TestBlockingTimeout: a timeout ends the wait with ErrTimeout; f's late
// result is dropped, reaches no mailbox and wakes no later wait (a stale
// wake would resume the sleeping handler for nothing: Sleep loops on its
// own flag, so its length cannot show one; the count of resumes does).
func TestBlockingTimeout(t *testing.T) {
	sys := start(t, actor.Config{})
	release, fDone := make(chan struct{}), make(chan struct{})
	out := make(chan error, 4)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch m {
		case "block":
			_, err := c.Blocking(func() (any, error) {
				defer close(fDone)
				<-release
				return "late", errors.New("late")
			}, 20*time.Millisecond)
			out <- err
		case "sleep":
			c.Sleep(time.Minute) // killed below, once checked
			out <- nil
		}
	}))
	sys.Send(pid, "block")
	if err := <-out; !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("Blocking: %v, want ErrTimeout", err)
	}
	resumes := func() (n uint64) {
		for _, s := range sys.Stats().Schedulers {
			n += s.Resumes
		}
		return n
	}
	sys.Send(pid, "sleep")
	eventually(t, 5*time.Second, "the handler asleep", func() bool { return sys.SlotState(pid) == "blocked" })
	before := resumes()
	close(release) // f returns while the actor sleeps
	<-fDone
	// Time for a stale wake's resume to show. The handler sleeps for a
	// minute, so no resume of its own can be counted here: the sleep can
	// only miss a stray wake on a slow machine, never invent one.
	time.Sleep(20 * time.Millisecond)
	if n := resumes() - before; n != 0 {
		t.Errorf("the late result resumed the sleeping handler %d times", n)
	}
	if info, err := sys.Info(pid); err != nil || info.MailboxLen != 0 {
		t.Fatalf("mailbox after the late result: %+v, %v", info, err)
	}
	select {
	case err := <-out:
		t.Fatalf("the minute's sleep ended early: %v", err)
	default:
	}
	sys.Exit(pid, actor.Kill)
}

// TestBlockingPanicAndKill: a panic in f is the handler's; a kill ends
// the wait at once while f runs on; bad input runs nothing.
func TestBlockingPanicAndKill(t *testing.T) {
	sys := start(t, actor.Config{Logger: func(string, ...any) {}})
	downs := make(chan actor.Reason, 2)
	watch := func(pid actor.Pid) {
		w, err := sys.Monitor(pid)
		if err != nil {
			t.Fatal(err)
		}
		go func() { <-w.Done(); downs <- w.Reason() }()
	}
	pan, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		c.Blocking(func() (any, error) { panic("in f") }, actor.Infinity)
	}))
	watch(pan)
	sys.Send(pan, "go")
	select {
	case r := <-downs:
		if p, ok := r.(actor.Panic); !ok || p.Value != "in f" {
			t.Fatalf("exit reason %#v, want the panic of f", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the panicking actor did not exit")
	}

	release, started := make(chan struct{}), make(chan struct{})
	defer close(release)
	killed, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		c.Blocking(func() (any, error) { close(started); <-release; return nil, nil }, actor.Infinity)
	}))
	watch(killed)
	sys.Send(killed, "go")
	<-started
	sys.Exit(killed, actor.Kill)
	select {
	case r := <-downs:
		if r != actor.Reason(actor.Killed) {
			t.Fatalf("exit reason %v, want killed", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a kill did not end the wait")
	}

	errs := make(chan error, 2)
	bad, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		_, err := c.Blocking(nil, time.Second)
		errs <- err
		_, err = c.Blocking(func() (any, error) { t.Error("f ran"); return nil, nil }, -1)
		errs <- err
	}))
	sys.Send(bad, "go")
	if err := <-errs; !errors.Is(err, actor.ErrNilFunc) {
		t.Errorf("Blocking(nil): %v, want ErrNilFunc", err)
	}
	if err := <-errs; !errors.Is(err, actor.ErrNegativeTimeout) {
		t.Errorf("Blocking with a negative timeout: %v, want ErrNegativeTimeout", err)
	}
}

// TestBlockingGoexitInF: an f that ends by runtime.Goexit (a t.Fatal in
// it, say) did not return, and Blocking must not say it did: its result
// was (nil, nil), as if f had returned them. It is raised in the handler
// as a panic that says so.
func TestBlockingGoexitInF(t *testing.T) {
	sys := start(t, actor.Config{Logger: func(string, ...any) {}})
	type result struct {
		v   any
		err error
	}
	res := make(chan result, 1)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		v, err := c.Blocking(func() (any, error) { runtime.Goexit(); return "unreached", nil }, 5*time.Second)
		res <- result{v, err}
	}))
	w, err := sys.Monitor(pid)
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "go")
	select {
	case r := <-res:
		t.Fatalf("Blocking whose f called runtime.Goexit returned (%v, %v)", r.v, r.err)
	case <-w.Done():
		p, ok := w.Reason().(actor.Panic)
		if !ok || !strings.Contains(fmt.Sprint(p.Value), "Goexit") {
			t.Fatalf("exit reason %#v, want a panic naming runtime.Goexit", w.Reason())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no result and no exit")
	}
}

// TestBlockingOutlivesShutdown: Shutdown does not wait for an f still
// running (it cannot be interrupted; docs/guarantees.md says so), and f's
// result, coming after Shutdown has returned, is dropped without harm.
func TestBlockingOutlivesShutdown(t *testing.T) {
	sys := start(t, actor.Config{})
	release, started, fDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		c.Blocking(func() (any, error) {
			defer close(fDone)
			close(started)
			<-release
			return "late", nil
		}, actor.Infinity)
	}))
	sys.Send(pid, "go")
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with f still running: %v", err)
	}
	if sys.Alive(pid) {
		t.Fatal("the actor outlived Shutdown")
	}
	close(release)
	<-fDone
}
