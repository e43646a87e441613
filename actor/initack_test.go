package actor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// acker acks when it gets "ready" (a later handler, not Init), with err.
type acker struct {
	err  error
	acks chan bool
}

func (a *acker) Receive(c *actor.Context, m any) {
	if m == "ready" {
		a.acks <- c.InitAck(a.err)
		a.acks <- c.InitAck(nil) // a second ack is owed to nobody
	}
}

func TestStartActorWaitsForInitAck(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	a := &acker{acks: make(chan bool, 2)}
	started := make(chan error, 1)
	var pid actor.Pid
	go func() {
		var err error
		pid, err = actor.StartActor(sys, a, 10*time.Second, actor.Name("svc"))
		started <- err
	}()
	var svc actor.Pid
	eventually(t, 10*time.Second, "the actor to be spawned", func() bool { var ok bool; svc, ok = sys.Whereis("svc"); return ok })
	select {
	case err := <-started:
		t.Fatalf("StartActor returned before the ack: %v", err)
	default:
	}
	sys.Send(svc, "ready")
	if err := recv(t, started); err != nil || pid != svc {
		t.Fatalf("StartActor = %v, %v; want %v", pid, err, svc)
	}
	if !recv(t, a.acks) || recv(t, a.acks) {
		t.Fatal("InitAck: want true, then false")
	}
	if !sys.Alive(svc) {
		t.Fatal("the acked actor is not running")
	}
}

func TestStartActorFailedAckReleasesTheName(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	bad := errors.New("bad config")
	ackInInit := initFunc(func(c *actor.Context) { c.InitAck(bad) })
	_, err := actor.StartActor(sys, ackInInit, 10*time.Second, actor.Name("svc"))
	var se *actor.StartError
	if !errors.As(err, &se) || !errors.Is(err, bad) {
		t.Fatalf("failed ack: %v", err)
	}
	// The name is free at once, for a restart.
	ok := initFunc(func(c *actor.Context) { c.InitAck(nil) })
	if _, err := actor.StartActor(sys, ok, 10*time.Second, actor.Name("svc")); err != nil {
		t.Fatalf("restart with the name: %v", err)
	}
}

func TestStartActorErrors(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	if _, err := actor.StartActor(nil, initFunc(nil), time.Second); !errors.Is(err, actor.ErrNilSystem) {
		t.Fatalf("nil system: %v", err)
	}
	if _, err := actor.StartActor(sys, initFunc(nil), -time.Second); !errors.Is(err, actor.ErrNegativeTimeout) {
		t.Fatalf("negative timeout: %v", err)
	}
	if _, err := actor.StartActor(sys, nil, time.Second); !errors.Is(err, actor.ErrNilBehaviour) {
		t.Fatalf("nil behaviour: %v", err)
	}
	// No ack in time: killed, and the start says timeout.
	_, err := actor.StartActor(sys, initFunc(func(*actor.Context) {}), 30*time.Millisecond)
	var se *actor.StartError
	if !errors.As(err, &se) || se.Reason != actor.Atom("timeout") || !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("no ack: %v", err)
	}
	// Died before its ack: its reason.
	_, err = actor.StartActor(sys, initFunc(func(c *actor.Context) { c.Stop(actor.Atom("boom")) }), 10*time.Second)
	if !errors.As(err, &se) || se.Reason != actor.Atom("boom") {
		t.Fatalf("died before the ack: %v", err)
	}
	// An actor not started so owes no ack.
	res := make(chan bool, 1)
	plain, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) { res <- c.InitAck(nil) }))
	sys.Send(plain, "go")
	if recv(t, res) {
		t.Fatal("InitAck of a plain Spawn: true")
	}
}

type initFunc func(c *actor.Context)

func (f initFunc) Init(c *actor.Context) {
	if f != nil {
		f(c)
	}
}
func (initFunc) Receive(*actor.Context, any) {}

// ExampleStartActor: the starter waits until the actor says it is ready.
func ExampleStartActor() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	pid, err := actor.StartActor(sys, initFunc(func(c *actor.Context) {
		// ... open files, connect, register ...
		c.InitAck(nil)
	}), time.Second)
	fmt.Println(err, sys.Alive(pid))
	_, err = actor.StartActor(sys, initFunc(func(c *actor.Context) {
		c.InitAck(actor.Stop(actor.Atom("no_config")))
	}), time.Second)
	fmt.Println(err)
	// Output:
	// <nil> true
	// actor: start failed: no_config
}

// killedInInit is a Server that kills itself in Init: it dies without an
// ack, with reason killed.
type killedInInit struct{ actor.ServerBase }

func (killedInInit) Init(c *actor.Context) error {
	c.Exit(c.Self(), actor.Kill)
	return nil
}

// A start from a handler (Context.StartLink, SpawnServer) of an actor that
// dies at once, before its ack, fails with the actor's own reason, never
// noproc: the starter's monitor is made with the child, as proc_lib's is,
// so the child cannot die before it (made after the spawn, it found a
// child that ran on another scheduler dead: noproc, within a few hundred
// rounds on 4 schedulers). And a server killed in its Init never acks: its
// start fails with killed, from a handler and from outside (the orphaned
// Init's ack, delivered, raced the Down and the start returned a dead
// pid as started).
func TestStartFromHandlerChildDiesAtOnce(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 4})
	boom := actor.Atom("boom")
	const rounds = 3000
	done := make(chan error, 1)
	_, err := sys.Spawn(initFunc(func(c *actor.Context) {
		c.TrapExit(true)           // StartLink's link: an Exit message, taken by the start
		defer c.Stop(actor.Normal) // trapping, it would outlive Shutdown's first signal
		for i := range rounds {
			var se *actor.StartError
			_, err := c.StartLink(initFunc(func(c *actor.Context) { c.Stop(boom) }), 10*time.Second)
			if !errors.As(err, &se) || se.Reason != actor.Reason(boom) {
				done <- fmt.Errorf("StartLink round %d: %v, want a StartError with boom", i, err)
				return
			}
			_, err = actor.SpawnServer(c, killedInInit{}, actor.NoLink())
			if !errors.As(err, &se) || se.Reason != actor.Reason(actor.Killed) {
				done <- fmt.Errorf("SpawnServer round %d: %v, want a StartError with killed", i, err)
				return
			}
		}
		if m, err := c.Receive(func(any) bool { return true }, 0); err == nil {
			done <- fmt.Errorf("left in the starter's mailbox: %#v", m)
			return
		}
		done <- nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := recv(t, done); err != nil {
		t.Fatal(err)
	}
	// From outside the System (its Watch is made with the child): a
	// killed Init's ack is dropped too.
	for i := range rounds / 10 {
		var se *actor.StartError
		if _, err := actor.StartServer(sys, killedInInit{}); !errors.As(err, &se) || se.Reason != actor.Reason(actor.Killed) {
			t.Fatalf("StartServer round %d: %v, want a StartError with killed", i, err)
		}
	}
}
