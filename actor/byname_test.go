package actor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// namedCounter is a Server that answers "get" with its count of casts.
type namedCounter struct {
	actor.ServerBase
	casts int
}

func (s *namedCounter) HandleCall(c *actor.Context, r actor.Request) { c.Reply(r, s.casts) }
func (s *namedCounter) HandleCast(c *actor.Context, m any)           { s.casts++ }

// Calls, casts and sends by registered name, from outside and from a
// handler, as gen_server:call(Name, _), gen_server:cast(Name, _), Name ! _.
func TestCallCastSendByName(t *testing.T) {
	sys := start(t, actor.Config{})
	srv, err := actor.StartServer(sys, &namedCounter{}, actor.WithSpawn(actor.Name("counter")))
	if err != nil {
		t.Fatal(err)
	}
	if err := actor.CastName(sys, "counter", "one"); err != nil {
		t.Fatal(err)
	}
	if n, err := actor.CallName[int](sys, "counter", "get", time.Second); n != 1 || err != nil {
		t.Fatalf("CallName from outside: %v, %v; want 1, nil", n, err)
	}

	type result struct {
		n                     int
		err, sendErr, selfErr error
	}
	out := make(chan result, 1)
	caller := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		var r result
		if r.err = actor.CastName(c, "counter", "two"); r.err == nil {
			r.n, r.err = actor.CallName[int](c, "counter", "get", time.Second)
		}
		r.sendErr = c.SendName("counter", "info")
		if err := c.Register("me"); err == nil {
			_, r.selfErr = c.CallName("me", "x", time.Second)
		}
		out <- r
	}))
	sys.Send(caller, "go")
	r := recv(t, out)
	if r.n != 2 || r.err != nil || r.sendErr != nil {
		t.Fatalf("by name from a handler: %+v; want 2 casts, no error", r)
	}
	if !errors.Is(r.selfErr, actor.ErrCallSelf) {
		t.Fatalf("a call to the caller's own name: %v, want ErrCallSelf", r.selfErr)
	}

	// A name nobody holds: noproc for a call (as OTP's exit), and
	// ErrNotRegistered for every form, naming the name.
	sys.Exit(srv, actor.Kill)
	eventually(t, 5*time.Second, "the name is freed", func() bool { _, ok := sys.Whereis("counter"); return !ok })
	_, err = sys.CallName("counter", "get", time.Second)
	if !errors.Is(err, actor.ErrNoProc) || !errors.Is(err, actor.ErrNotRegistered) || !strings.Contains(err.Error(), `"counter"`) {
		t.Fatalf("CallName of a free name: %v; want ErrNoProc and ErrNotRegistered naming it", err)
	}
	if err := actor.CastName(sys, "counter", "x"); !errors.Is(err, actor.ErrNotRegistered) {
		t.Fatalf("CastName of a free name: %v; want ErrNotRegistered", err)
	}
	errs := make(chan error, 2)
	probe := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		_, err := c.CallName("counter", "get", time.Second)
		errs <- err
		errs <- c.SendName("counter", "x")
	}))
	sys.Send(probe, "go")
	if err := recv(t, errs); !errors.Is(err, actor.ErrNoProc) || !errors.Is(err, actor.ErrNotRegistered) {
		t.Fatalf("Context.CallName of a free name: %v", err)
	}
	if err := recv(t, errs); !errors.Is(err, actor.ErrNotRegistered) {
		t.Fatalf("Context.SendName of a free name: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.CallName("counter", "get", time.Second); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("CallName after Shutdown: %v, want ErrStopped", err)
	}
}

// ExampleCallName: a call by registered name, as gen_server:call(Name, Req).
func ExampleCallName() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	actor.StartServer(sys, &namedCounter{}, actor.WithSpawn(actor.Name("counter")))
	actor.CastName(sys, "counter", "hello")
	n, err := actor.CallName[int](sys, "counter", "get", time.Second)
	fmt.Println(n, err)
	_, err = actor.CallName[int](sys, "nobody", "get", time.Second)
	fmt.Println(errors.Is(err, actor.ErrNoProc))
	// Output:
	// 1 <nil>
	// true
}

// An actor joins and leaves groups from its handler; leaving a group it is
// not in is ErrNotJoined (pg's not_joined), without importing registry.
func TestContextJoinLeaveGroup(t *testing.T) {
	sys := start(t, actor.Config{})
	errs := make(chan error, 3)
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		switch m {
		case "join":
			errs <- c.JoinGroup("g")
		case "leave":
			errs <- c.LeaveGroup("g")
		}
	}))
	sys.Send(pid, "join")
	if err := recv(t, errs); err != nil {
		t.Fatal(err)
	}
	if got := sys.GroupMembers("g"); len(got) != 1 || got[0] != pid {
		t.Fatalf("members %v, want [%v]", got, pid)
	}
	sys.Send(pid, "leave")
	sys.Send(pid, "leave")
	if err := recv(t, errs); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, errs); !errors.Is(err, actor.ErrNotJoined) {
		t.Fatalf("a second leave: %v, want ErrNotJoined", err)
	}
}

// A ServerRef with a Name resolves it at each call, so it reaches the
// server a restart put under the name; by Pid it would reach the dead one.
func TestServerRefByName(t *testing.T) {
	sys := start(t, actor.Config{})
	first, err := actor.StartServer(sys, actor.Typed[get, int, add](&counter{}), actor.WithSpawn(actor.Name("counter")))
	if err != nil {
		t.Fatal(err)
	}
	ref := actor.ServerRef[get, int, add]{Name: "counter"}
	if err := ref.Cast(sys, 5); err != nil {
		t.Fatal(err)
	}
	if n, err := ref.Call(sys, get{}, time.Second); n != 5 || err != nil {
		t.Fatalf("by name: %v, %v", n, err)
	}
	sys.Exit(first, actor.Kill)
	eventually(t, 5*time.Second, "the name is free", func() bool { _, ok := sys.Whereis("counter"); return !ok })
	if _, err := ref.Call(sys, get{}, time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("while the name is free: %v, want ErrNoProc", err)
	}
	if _, err := actor.StartServer(sys, actor.Typed[get, int, add](&counter{}), actor.WithSpawn(actor.Name("counter"))); err != nil {
		t.Fatal(err)
	}
	ref.Cast(sys, 2)
	if n, err := ref.Call(sys, get{}, time.Second); n != 2 || err != nil {
		t.Fatalf("after the restart: %v, %v; want the new server's 2", n, err)
	}
}
