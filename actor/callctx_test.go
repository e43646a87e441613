package actor_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// holder answers "now" at once and keeps every other call, answering it
// when it gets "release".
type holder struct {
	actor.ServerBase
	held    []actor.Request
	holding chan<- struct{} // if set, told of each call it holds
}

func (h *holder) HandleCall(c *actor.Context, r actor.Request) {
	switch r.Msg {
	case "now":
		c.Reply(r, "ok")
		return
	case "count":
		c.Reply(r, len(h.held))
		return
	}
	h.held = append(h.held, r)
	if h.holding != nil {
		h.holding <- struct{}{}
	}
}

func (h *holder) HandleInfo(c *actor.Context, m any) {
	if m == "release" {
		for _, r := range h.held {
			c.Reply(r, "late")
		}
		h.held = nil
	}
}

// CallContext ends with ctx: a reply in time is returned; a cancel gives
// context.Canceled; a deadline gives an error that is ErrTimeout and
// context.DeadlineExceeded; a reply after either is late (counted, never
// returned to a later call); a ctx already done sends nothing.
func TestCallContext(t *testing.T) {
	sys := start(t, actor.Config{})
	holding := make(chan struct{}, 8)
	pid, err := actor.StartServer(sys, &holder{holding: holding}, actor.WithSpawn(actor.Name("holder")))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := actor.CallContext[string](context.Background(), sys, pid, "now"); v != "ok" || err != nil {
		t.Fatalf("in time: %v, %v", v, err)
	}
	if v, err := actor.CallNameContext[string](context.Background(), sys, "holder", "now"); v != "ok" || err != nil {
		t.Fatalf("by name: %v, %v", v, err)
	}

	// Cancelled once the server holds the call.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-holding; cancel() }()
	if _, err := sys.CallContext(ctx, pid, "hold"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}

	// A deadline that passes while the server holds the call. On a machine
	// so loaded that 10 ms passed before the call was sent (nothing held:
	// "count", ordered after it, says 1), again with a longer one.
	for d := 10 * time.Millisecond; ; d *= 4 {
		dctx, dcancel := context.WithTimeout(context.Background(), d)
		_, err = sys.CallContext(dctx, pid, "hold")
		dcancel()
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, actor.ErrTimeout) {
			t.Fatalf("deadline: %v, want ErrTimeout and context.DeadlineExceeded", err)
		}
		if n, err := actor.Call[int](sys, pid, "count", 5*time.Second); err != nil || n == 2 {
			if err != nil {
				t.Fatal(err)
			}
			<-holding
			break
		}
		if d > 10*time.Second {
			t.Fatal("no call held before its deadline, up to a 10 s deadline")
		}
	}

	late := sys.Stats().LateReplies
	sys.Send(pid, "release")
	eventually(t, 5*time.Second, "both late replies are counted", func() bool { return sys.Stats().LateReplies == late+2 })
	if v, err := actor.CallContext[string](context.Background(), sys, pid, "now"); v != "ok" || err != nil {
		t.Fatalf("after the late replies: %v, %v", v, err)
	}

	handled := mustInfo(t, sys, pid).Handled
	if _, err := sys.CallContext(ctx, pid, "now"); !errors.Is(err, context.Canceled) {
		t.Fatalf("a ctx already done: %v", err)
	}
	if h := mustInfo(t, sys, pid).Handled; h != handled {
		t.Fatalf("a call with a ctx already done reached the server (%d -> %d messages)", handled, h)
	}
	if _, err := sys.CallNameContext(context.Background(), "nobody", "now"); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("a free name: %v", err)
	}
	//lint:ignore SA1012 a nil ctx is the bad input under test
	if _, err := sys.CallContext(nil, pid, "now"); !errors.Is(err, actor.ErrNilContext) {
		t.Fatalf("a nil ctx: %v", err)
	}
}

func mustInfo(t *testing.T, sys *actor.System, pid actor.Pid) actor.ActorInfo {
	t.Helper()
	info, err := sys.Info(pid)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// ErrTimeout, and a Call's timeout, are a deadline exceeded and a timeout
// by Go's conventions.
func TestErrTimeoutConventions(t *testing.T) {
	sys := start(t, actor.Config{})
	pid, err := actor.StartServer(sys, &holder{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sys.Call(pid, "hold", time.Millisecond)
	var te interface{ Timeout() bool }
	if !errors.Is(err, actor.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &te) || !te.Timeout() {
		t.Fatalf("a Call's timeout: %v; want ErrTimeout, context.DeadlineExceeded and Timeout() true", err)
	}
	if errors.Is(actor.ErrNoProc, context.DeadlineExceeded) {
		t.Fatal("ErrNoProc is a deadline exceeded")
	}
}

// A server sees whether a held call's caller still waits: true while it
// does, false once the call timed out, its ctx ended, or it was answered.
func TestRequestWaiting(t *testing.T) {
	sys := start(t, actor.Config{})
	held := make(chan actor.Request, 4)
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			held <- r
		}
	}))
	errs := make(chan error, 1)
	// Waiting is looked at while the call cannot have timed out (a
	// minute), then after a reply; a short timeout, only once it has ended.
	go func() { _, err := sys.Call(pid, "x", 50*time.Millisecond); errs <- err }()
	r := recv(t, held)
	if err := recv(t, errs); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("call: %v", err)
	}
	if sys.Waiting(r) {
		t.Fatal("Waiting true after the call timed out")
	}
	go func() { _, err := sys.Call(pid, "y", time.Minute); errs <- err }()
	r = recv(t, held)
	if !sys.Waiting(r) {
		t.Fatal("Waiting false while the caller waits")
	}
	sys.Reply(r, "done")
	if err := recv(t, errs); err != nil {
		t.Fatal(err)
	}
	if sys.Waiting(r) || sys.Waiting(actor.Request{}) {
		t.Fatal("Waiting true after the reply, or for the zero Request")
	}
	// A caller actor that dies while waiting.
	caller := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { c.Call(pid, "z", actor.Infinity) }))
	sys.Send(caller, "go")
	r = recv(t, held)
	if !sys.Waiting(r) {
		t.Fatal("Waiting false while a caller actor waits")
	}
	sys.Exit(caller, actor.Kill)
	eventually(t, 5*time.Second, "the caller is gone", func() bool { return !sys.Waiting(r) })
}

type echoSrv struct{ actor.ServerBase }

func (echoSrv) HandleCall(c *actor.Context, r actor.Request) {
	if n := r.Msg.(int); n%3 == 0 {
		runtime.Gosched()
	}
	c.Reply(r, r.Msg)
}

// CallContext's pooled done channel under cancels racing replies:
// every call gets its own reply or ctx's error, never another call's
// (a channel recycled while a sender could still use it would hand one).
func TestCallContextCancelRacesReply(t *testing.T) {
	sys := start(t, actor.Config{})
	pid, err := actor.StartServer(sys, echoSrv{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := g; i < 4000; i += 4 {
				ctx, cancel := context.WithCancel(context.Background())
				if i%2 == 0 {
					go cancel()
				}
				v, err := sys.CallContext(ctx, pid, i)
				cancel()
				if err == nil && v != i {
					t.Errorf("call %d got %v", i, v)
					return
				}
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("call %d: %v", i, err)
					return
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}
