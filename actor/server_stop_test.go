package actor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// stopSrv reports its Terminate's reason on terminated; on "reason" its
// Terminate stops with changeTo instead.
type stopSrv struct {
	actor.ServerBase
	terminated chan actor.Reason
	changeTo   actor.Reason
}

func (s *stopSrv) HandleCall(c *actor.Context, r actor.Request) {
	switch r.Msg {
	case "stop_reply":
		actor.StopReply(c, actor.Atom("done"), r, "bye")
	case "stop_reply_then_panic":
		actor.StopReply(c, actor.Atom("done"), r, "bye")
		panic("after StopReply")
	default:
		c.Reply(r, "pong")
	}
}

func (s *stopSrv) Terminate(c *actor.Context, r actor.Reason) {
	s.terminated <- r
	if s.changeTo != nil {
		c.Stop(s.changeTo)
	}
}

func TestStopServerRunsTerminateWithoutTrapping(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	srv := &stopSrv{terminated: make(chan actor.Reason, 1)}
	pid, err := actor.StartServer(sys, srv)
	if err != nil {
		t.Fatal(err)
	}
	if err := actor.StopServer(sys, pid, actor.Atom("maintenance"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, srv.terminated); r != actor.Atom("maintenance") {
		t.Fatalf("Terminate got %v", r)
	}
	if sys.Alive(pid) {
		t.Fatal("server alive after StopServer returned")
	}
	if err := actor.StopServer(sys, pid, nil, time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("stop of a dead server: %v", err)
	}
}

func TestStopServerErrors(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	plain, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err := actor.StopServer(sys, plain, nil, time.Second); !errors.Is(err, actor.ErrNotServer) {
		t.Fatalf("plain actor: %v", err)
	}
	if err := actor.StopServer(sys, actor.Pid{}, nil, time.Second); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("zero pid: %v", err)
	}
	if err := actor.StopServer(sys, plain, nil, -time.Second); !errors.Is(err, actor.ErrNegativeTimeout) {
		t.Fatalf("negative timeout: %v", err)
	}
	if err := actor.StopServer(nil, plain, nil, time.Second); !errors.Is(err, actor.ErrNilSystem) {
		t.Fatalf("nil system: %v", err)
	}
	// A nil reason is normal; a Terminate that stops with another reason
	// is reported with the reason the server exited with.
	srv := &stopSrv{terminated: make(chan actor.Reason, 1), changeTo: actor.Atom("other")}
	pid, _ := actor.StartServer(sys, srv)
	var ce *actor.CallExitError
	if err := actor.StopServer(sys, pid, nil, 5*time.Second); !errors.As(err, &ce) || ce.Reason != actor.Atom("other") {
		t.Fatalf("Terminate changed the reason: %v", err)
	}
	if r := recv(t, srv.terminated); r != actor.Normal {
		t.Fatalf("nil reason reached Terminate as %v", r)
	}
	// From a handler: stopping itself is ErrCallSelf.
	self := make(chan error, 1)
	me, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) { self <- c.StopServer(c.Self(), nil, time.Second) }))
	sys.Send(me, "go")
	if err := recv(t, self); !errors.Is(err, actor.ErrCallSelf) {
		t.Fatalf("stop of self: %v", err)
	}
}

func TestStopServerFromHandlerTimesOutOnBusyServer(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	gate := make(chan struct{})
	busy := make(chan struct{})
	srv := &blockingSrv{gate: gate, busy: busy, terminated: make(chan actor.Reason, 1)}
	pid, _ := actor.StartServer(sys, srv)
	go actor.Call[any](sys, pid, "block", actor.Infinity)
	<-busy
	res := make(chan error, 1)
	stopper, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		res <- c.StopServer(pid, actor.Shutdown, 50*time.Millisecond)
	}))
	sys.Send(stopper, "go")
	if err := recv(t, res); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("stop of a busy server: %v", err)
	}
	close(gate)
	// The request stays queued: the server stops once it takes it.
	if r := recv(t, srv.terminated); r != actor.Shutdown {
		t.Fatalf("Terminate got %v", r)
	}
}

type blockingSrv struct {
	actor.ServerBase
	gate       chan struct{}
	busy       chan struct{}
	terminated chan actor.Reason
}

func (s *blockingSrv) HandleCall(c *actor.Context, r actor.Request) {
	close(s.busy)
	c.Blocking(func() (any, error) { <-s.gate; return nil, nil }, actor.Infinity)
	c.Reply(r, nil)
}

func (s *blockingSrv) Terminate(_ *actor.Context, r actor.Reason) { s.terminated <- r }

func TestStopReplyRepliesAfterTerminate(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	srv := &stopSrv{terminated: make(chan actor.Reason, 1)}
	pid, _ := actor.StartServer(sys, srv)
	v, err := actor.Call[string](sys, pid, "stop_reply", 5*time.Second)
	if err != nil || v != "bye" {
		t.Fatalf("call: %q %v", v, err)
	}
	select {
	case r := <-srv.terminated: // sent before the reply
		if r != actor.Atom("done") {
			t.Fatalf("Terminate got %v", r)
		}
	default:
		t.Fatal("the reply came before Terminate ran")
	}
	// A panic after StopReply drops the reply: the caller sees the crash.
	srv2 := &stopSrv{terminated: make(chan actor.Reason, 1)}
	pid2, _ := actor.StartServer(sys, srv2)
	_, err = actor.Call[string](sys, pid2, "stop_reply_then_panic", 5*time.Second)
	var ce *actor.CallExitError
	if !errors.As(err, &ce) {
		t.Fatalf("call to a server that panicked after StopReply: %v", err)
	}
	if _, ok := ce.Reason.(actor.Panic); !ok {
		t.Fatalf("exit reason %v; want a Panic", ce.Reason)
	}
}

// ExampleStopServer: a server is stopped from main with a reason its
// Terminate sees, though it does not trap exits.
func ExampleStopServer() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	srv := &stopSrv{terminated: make(chan actor.Reason, 1)}
	pid, _ := actor.StartServer(sys, srv)
	err := actor.StopServer(sys, pid, actor.Atom("maintenance"), time.Second)
	fmt.Println(err, <-srv.terminated, sys.Alive(pid))
	// Output: <nil> maintenance false
}

// ExampleStopReply: the caller gets its reply once Terminate has run, as
// with gen_server's {stop, Reason, Reply, State}.
func ExampleStopReply() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	srv := &stopSrv{terminated: make(chan actor.Reason, 1)}
	pid, _ := actor.StartServer(sys, srv)
	v, _ := actor.Call[string](sys, pid, "stop_reply", time.Second)
	fmt.Println(v, len(srv.terminated)) // Terminate has already reported
	// Output: bye 1
}
