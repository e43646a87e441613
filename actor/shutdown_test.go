package actor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestShutdownRacesSpawn: roots spawned from outside while Shutdown runs are
// all stopped, and Shutdown with no deadline returns (a root published just
// after Shutdown's scan of the slab must still get its signal).
func TestShutdownRacesSpawn(t *testing.T) {
	for range 20 {
		sys, err := actor.Start(actor.Config{Schedulers: 2})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		spawned := make(chan struct{})
		go func() {
			defer close(stop)
			idle := actor.ActorFunc(func(*actor.Context, any) {})
			for i := 0; ; i++ {
				if _, err := sys.Spawn(idle); errors.Is(err, actor.ErrStopped) {
					return
				} else if err != nil {
					t.Error(err)
					return
				}
				if i == 100 {
					close(spawned)
				}
			}
		}()
		<-spawned
		done := make(chan error, 1)
		go func() { done <- sys.Shutdown(context.Background()) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Shutdown did not return; stats %+v", sys.Stats())
		}
		<-stop
		if n := sys.Stats().Live; n != 0 {
			t.Fatalf("%d actors live after Shutdown", n)
		}
	}
}

// A Shutdown that comes while another is under way waits for it: it
// returned nil as soon as the first had halted the workers, while the first
// still waited for a Helper goroutine (netio's poller), so its caller could
// see the System "stopped" with that goroutine and its fds still there.
func TestShutdownConcurrentWaitsForFirst(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dead := deadPid(t, sys)
	exited := sys.Helper()
	first := make(chan error, 1)
	go func() { first <- sys.Shutdown(context.Background()) }()
	// The first has halted the workers (a send then says ErrStopped) and
	// now waits for the Helper.
	eventually(t, 5*time.Second, "the first Shutdown halts", func() bool {
		return errors.Is(sys.Send(dead, "x"), actor.ErrStopped)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := sys.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Shutdown while the first waits for a Helper: %v, want it to wait (context.DeadlineExceeded)", err)
	}
	exited()
	if err := recv(t, first); err != nil {
		t.Fatalf("first Shutdown: %v", err)
	}
	if err := sys.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown after Shutdown: %v", err)
	}
}

// Actors linked only to each other, whose parent is gone, are not stopped
// through any link: Shutdown's second step still signals them once nothing
// else is exiting (after the one-second grace, not at ctx's end).
func TestShutdownStopsLinkedOrphans(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	linked := make(chan error, 1)
	parent := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, _ any) {
		a, err := c.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
		if err == nil {
			_, err = c.Spawn(&linksTo{peer: a, done: linked})
		}
		if err != nil {
			linked <- err
		}
		c.Stop(actor.Normal) // the pair outlives its parent, linked only to each other
	}))
	sys.Send(parent, "go")
	if err := recv(t, linked); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the parent exits", func() bool { return !sys.Alive(parent) })
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if st := sys.Stats(); st.Live != 0 {
		t.Fatalf("%d actors left after Shutdown", st.Live)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
}

// linksTo links to peer in Init and reports the result on done.
type linksTo struct {
	peer actor.Pid
	done chan<- error
}

func (l *linksTo) Init(c *actor.Context)       { l.done <- c.Link(l.peer) }
func (l *linksTo) Receive(*actor.Context, any) {}

// A Shutdown after one that failed (its ctx ended with an actor that traps
// and ignores Shutdown still live) returns the same error: it returned nil,
// as if the System had stopped cleanly.
func TestShutdownAfterFailedShutdownSaysSo(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {}), actor.TrapExit())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	first := sys.Shutdown(ctx)
	if !errors.Is(first, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with a trapping actor that ignores it: %v, want DeadlineExceeded", first)
	}
	if err := sys.Shutdown(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown after a failed Shutdown: %v, want the first's error", err)
	}
}

// stopsSlowly traps exits; on its Shutdown signal it takes a while to stop
// (as a supervisor stopping its children one by one) and records when it
// was signalled and when it finished on log.
type stopsSlowly struct {
	name string
	took time.Duration
	log  chan<- string
}

func (s *stopsSlowly) Receive(c *actor.Context, m any) {
	if x, ok := m.(actor.Exit); ok && actor.IsShutdown(x.Reason) {
		s.log <- s.name + " signalled"
		time.Sleep(s.took)
		s.log <- s.name + " stopped"
		c.Stop(actor.Shutdown)
	}
}

// Shutdown stops the roots newest first, one tree at a time: a root that
// traps exits (a supervisor: it stops its children before it exits) is
// stopped before the next older root is told, as OTP stops applications in
// reverse start order, each to its end. A service's front end (started
// last) could otherwise still be calling its back end (started first)
// while that was stopping; every root was signalled at once.
func TestShutdownStopsRootTreesOneAtATime(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	log := make(chan string, 16)
	back := mustSpawn(t, sys, &stopsSlowly{name: "back", took: 10 * time.Millisecond, log: log}, actor.TrapExit())
	leaf := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	front := mustSpawn(t, sys, &stopsSlowly{name: "front", took: 100 * time.Millisecond, log: log}, actor.TrapExit())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	close(log)
	var got []string
	for s := range log {
		got = append(got, s)
	}
	want := []string{"front signalled", "front stopped", "back signalled", "back stopped"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("roots stopped as %q, want %q", got, want)
	}
	for _, p := range []actor.Pid{back, leaf, front} {
		if sys.Alive(p) {
			t.Fatalf("%v alive after Shutdown", p)
		}
	}
}

// A HelperWithAbort goroutine still at work when Shutdown's ctx ends is
// aborted, and Shutdown waits for it to exit before it returns ctx's error;
// one that finishes within ctx is not aborted; one registered after the
// abort is aborted at once. (Shutdown used to return at ctx's end with the
// goroutine still running: netio's poller, writing out a closed socket's
// queued output, then outlived it with its fds.)
func TestShutdownAbortsHelpersAtCtxEnd(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// quick finishes by itself within ctx; slow runs until aborted.
	quickDone, quickAborted := make(chan struct{}), make(chan struct{}, 1)
	quickExited := sys.HelperWithAbort(func() { quickAborted <- struct{}{} })
	go func() { <-quickDone; quickExited() }()
	slowAbort, slowGone := make(chan struct{}), make(chan struct{})
	slowExited := sys.HelperWithAbort(func() { close(slowAbort) })
	go func() {
		<-slowAbort
		time.Sleep(10 * time.Millisecond) // exiting takes a moment: Shutdown waits for it
		// slowGone before exited: Shutdown may return as soon as exited
		// has counted the goroutine out (closing slowGone after it made
		// this test fail, 22 runs in 300).
		close(slowGone)
		slowExited()
	}()
	// quick is done 20 ms into a 500 ms ctx: the margin is for a loaded
	// machine, where the AfterFunc may run late.
	time.AfterFunc(20*time.Millisecond, func() { close(quickDone) })
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err = sys.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with a helper at work past its ctx: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(begin); d < 500*time.Millisecond {
		t.Fatalf("Shutdown returned after %v, before its ctx ended", d)
	}
	select {
	case <-slowGone:
	default:
		t.Fatal("Shutdown returned before the aborted helper exited")
	}
	if len(quickAborted) != 0 {
		t.Fatal("a helper that had exited within ctx was aborted")
	}
	lateAborted := false
	lateExited := sys.HelperWithAbort(func() { lateAborted = true })
	if !lateAborted {
		t.Fatal("a helper registered after Shutdown's abort was not aborted at once")
	}
	lateExited()
}

// After Shutdown, a send by name is ErrStopped, as a send to a pid and a call
// by name are: a publisher that casts to a registered broker and stops at
// ErrStopped got ErrNotRegistered instead, which reads as a missing server
// in a System that still runs.
func TestSendNameAfterShutdownIsErrStopped(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("broker"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := sys.Send(pid, 1); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("Send after Shutdown: %v, want ErrStopped", err)
	}
	if _, err := sys.CallName("broker", 1, 0); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("CallName after Shutdown: %v, want ErrStopped", err)
	}
	if err := sys.SendName("broker", 1); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("SendName after Shutdown: %v, want ErrStopped", err)
	}
	if err := actor.CastName(sys, "broker", 1); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("CastName after Shutdown: %v, want ErrStopped", err)
	}
	// And Register (it was ErrNoProc: true, every pid is dead, but unlike
	// Send's; the bad-input sweep).
	if err := sys.Register("again", pid); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("Register after Shutdown: %v, want ErrStopped", err)
	}
}

// An actor that Shutdown has not told to stop yet arms timers while an
// older tree drains, as erlang:send_after works until the process itself is
// stopped: SendAfter during Shutdown's ordered stop succeeds and its timer
// fires. (Refused from the moment Shutdown began, a periodic tick re-armed
// on each firing would die mid-stop, as would any timeout an actor arms
// during a long drain.)
func TestSendAfterWorksDuringOrderedShutdown(t *testing.T) {
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	armed := make(chan error, 1)
	ticked := make(chan struct{}, 1)
	// The older root: stopped only after the newer one has exited.
	older, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch msg {
		case "arm":
			_, err := c.SendAfter(c.Self(), "tick", time.Millisecond)
			armed <- err
		case "tick":
			ticked <- struct{}{}
		}
	}))
	// The newer root traps exits and takes a while to stop (a drain).
	draining, release := make(chan struct{}), make(chan struct{})
	sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if _, ok := msg.(actor.Exit); ok {
			close(draining)
			<-release
			c.Stop(actor.Shutdown)
		}
	}), actor.TrapExit())
	stopped := make(chan error)
	go func() { stopped <- sys.Shutdown(context.Background()) }()
	<-draining
	defer func() { close(release); <-stopped }()

	if !sys.Alive(older) {
		t.Fatal("the older root was stopped before the newer one")
	}
	if err := sys.Send(older, "arm"); err != nil {
		t.Fatalf("Send during the stop: %v", err)
	}
	if err := <-armed; err != nil {
		t.Fatalf("SendAfter from a live actor during Shutdown's ordered stop: %v, want nil", err)
	}
	select {
	case <-ticked:
	case <-time.After(5 * time.Second):
		t.Fatal("the timer never fired")
	}
}

// An actor told to stop by Shutdown's last signal to the actors left
// (stopOrphans' signal to all, once the live count has stood still) may
// spawn until Shutdown seals the System. A child it spawns unlinked must be
// signalled too: else Shutdown waits for it until its ctx ends (for ever
// with context.Background()), then kills it and returns ctx's error.
func TestShutdownStopsActorSpawnedAtOrphanSignal(t *testing.T) {
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan actor.Pid, 1)
	spawnErr := make(chan error, 1)
	// The root spawns a and b, linked to each other only, then exits: at
	// Shutdown they are orphans linked to a live actor, so only the
	// signal to all reaches them. a traps exits; told Shutdown by the
	// System, it spawns an idle helper, unlinked, and stops.
	root, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		a, err := c.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			switch m := msg.(type) {
			case actor.Pid:
				c.Link(m)
				ready <- c.Self()
			case actor.Exit:
				if m.From.IsZero() {
					c.Sleep(50 * time.Millisecond) // after the scan
					_, err := c.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
					spawnErr <- err
					c.Stop(actor.Shutdown)
				}
			}
		}), actor.TrapExit())
		if err != nil {
			t.Error(err)
			return
		}
		b, err := c.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
		if err != nil {
			t.Error(err)
			return
		}
		c.Send(a, b)
		c.Stop(actor.Normal)
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(root, "go")
	<-ready
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	begin := time.Now()
	err = sys.Shutdown(ctx)
	if err != nil {
		t.Fatalf("Shutdown: %v after %v (the helper spawned at its signal to all was never told to stop)", err, time.Since(begin).Round(time.Millisecond))
	}
	select {
	case err := <-spawnErr:
		t.Logf("the spawn during the signal to all: %v", err)
	default:
		t.Fatal("a was never told Shutdown")
	}
}
