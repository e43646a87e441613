package statem_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
	"github.com/colonyrt/colony/statem"
)

func startSystem(t *testing.T) *actor.System {
	t.Helper()
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
	})
	return sys
}

// recorder is a machine whose callbacks run the func its test gives, and
// which sends each Terminate's reason and state to out.
type recorder struct {
	init   func(c *statem.Context[int]) (int, error)
	handle func(c *statem.Context[int], st int, ev statem.Event)
	enter  func(c *statem.Context[int], old, st int)
	out    chan string
}

func (r *recorder) Init(c *statem.Context[int]) (int, error) {
	if r.init == nil {
		return 0, nil
	}
	return r.init(c)
}

func (r *recorder) HandleEvent(c *statem.Context[int], st int, ev statem.Event) { r.handle(c, st, ev) }

func (r *recorder) Terminate(c *statem.Context[int], reason actor.Reason, st int) {
	if r.out != nil {
		r.out <- fmt.Sprintf("terminate %v in %d", reason, st)
	}
}

type enterRecorder struct{ *recorder }

func (r enterRecorder) Enter(c *statem.Context[int], old, st int) { r.enter(c, old, st) }

// TestCallFromOutsideIsTyped: a machine is called as a Server is, with the
// typed Call, and a reply set in a callback reaches the caller.
func TestCallFromOutsideIsTyped(t *testing.T) {
	sys := startSystem(t)
	pid, err := statem.Start[int](sys, &recorder{handle: func(c *statem.Context[int], st int, ev statem.Event) {
		if ev.Type == statem.Call {
			c.Reply(ev.Req, st+ev.Msg.(int))
			c.NextState(st + 1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{10, 11, 12} {
		got, err := actor.Call[int](sys, pid, 10, time.Minute)
		if err != nil || got != want {
			t.Fatalf("call %d = %d, %v; want %d", i, got, err, want)
		}
	}
}

// TestPanicRunsTerminateWithStateBefore: a panic in a callback drops its
// transition; Terminate sees the state the machine was in and the Panic.
func TestPanicRunsTerminateWithStateBefore(t *testing.T) {
	sys := startSystem(t)
	out := make(chan string, 4)
	pid, err := statem.Start[int](sys, &recorder{out: out, handle: func(c *statem.Context[int], st int, ev statem.Event) {
		c.NextState(7)
		panic("bad event")
	}})
	if err != nil {
		t.Fatal(err)
	}
	actor.Cast(sys, pid, "x")
	got := <-out
	if !strings.HasPrefix(got, "terminate actor panicked: bad event") || !strings.HasSuffix(got, "in 0") {
		t.Fatalf("got %q, want a panic's Terminate in state 0", got)
	}
}

// TestEnterErrorsAreEnterErrors: each forbidden enter action stops the
// machine with an *EnterError that errors.Is takes for ErrBadEnter, and a
// Terminate in the state being entered.
func TestEnterErrorsAreEnterErrors(t *testing.T) {
	for _, tc := range []struct {
		action string
		bad    func(c *statem.Context[int])
	}{
		{"postpone", func(c *statem.Context[int]) { c.Postpone() }},
		{"next_event", func(c *statem.Context[int]) { c.NextEvent(statem.Internal, "x") }},
		{"next_state", func(c *statem.Context[int]) { c.NextState(9) }},
	} {
		t.Run(tc.action, func(t *testing.T) {
			sys := startSystem(t)
			out := make(chan string, 4)
			r := &recorder{out: out, handle: func(c *statem.Context[int], st int, ev statem.Event) { c.NextState(1) }}
			r.enter = func(c *statem.Context[int], old, st int) {
				if st == 1 {
					tc.bad(c)
				}
			}
			pid, err := statem.Start[int](sys, enterRecorder{r})
			if err != nil {
				t.Fatal(err)
			}
			w, _ := sys.Monitor(pid)
			actor.Cast(sys, pid, "go")
			<-w.Done()
			var ee *statem.EnterError
			if err, ok := w.Reason().(error); !ok || !errors.Is(err, statem.ErrBadEnter) || !errors.As(err, &ee) || ee.Action != tc.action {
				t.Fatalf("exit reason %v, want an EnterError for %s", w.Reason(), tc.action)
			}
			if got := <-out; !strings.HasSuffix(got, "in 1") {
				t.Fatalf("%q: want Terminate in the state entered, 1", got)
			}
		})
	}
}

// TestStaleTimeoutMessageIsDropped: a state timeout restarted for an hour
// after its timer fired, its message already queued, does not fire: the
// stale message is dropped, not taken for the new timer's.
func TestStaleTimeoutMessageIsDropped(t *testing.T) {
	sys := startSystem(t)
	out := make(chan string, 8)
	rearmed := make(chan struct{}, 1)
	pid, err := statem.Start[int](sys, &recorder{handle: func(c *statem.Context[int], st int, ev statem.Event) {
		switch {
		case ev.Type == statem.Cast && ev.Msg == "arm":
			c.StateTimeout(time.Microsecond, "old")
		case ev.Type == statem.Cast && ev.Msg == "rearm":
			// Wait (polling, with a deadline) until the old timer's
			// message is queued behind this one (nothing else is sent
			// until rearmed), then restart the timeout.
			deadline := time.Now().Add(time.Minute)
			for info, _ := c.Info(); info.MailboxLen == 0; info, _ = c.Info() {
				if time.Now().After(deadline) {
					panic("the old timer never fired")
				}
				time.Sleep(50 * time.Microsecond)
			}
			c.StateTimeout(time.Hour, "new")
			rearmed <- struct{}{}
		case ev.Type == statem.StateTimeout:
			out <- fmt.Sprint(ev.Msg)
		case ev.Type == statem.Call:
			c.Reply(ev.Req, "ok")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	actor.Cast(sys, pid, "arm")
	actor.Cast(sys, pid, "rearm")
	<-rearmed
	if _, err := actor.Call[string](sys, pid, "sync", time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-out:
		t.Fatalf("the state timeout fired with %s: a stale timer message was taken", got)
	default:
	}
}

// TestMisuseOfVerbsPanics: a NextEvent of type Call, a negative timeout,
// a ReplyError with nil and a transition set in Init are a caller's
// mistakes, each a panic that says what was wrong.
func TestMisuseOfVerbsPanics(t *testing.T) {
	for name, f := range map[string]func(c *statem.Context[int]){
		"NextEvent(Call)":  func(c *statem.Context[int]) { c.NextEvent(statem.Call, "x") },
		"negative timeout": func(c *statem.Context[int]) { c.StateTimeout(-time.Second, "x") },
		"ReplyError(nil)":  func(c *statem.Context[int]) { c.ReplyError(actor.Request{}, nil) },
		"zero Timer":       func(c *statem.Context[int]) { c.CancelTimeout(statem.Timer{}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f(&statem.Context[int]{})
		})
	}
	sys := startSystem(t)
	_, err := statem.Start[int](sys, &recorder{init: func(c *statem.Context[int]) (int, error) {
		c.NextState(3)
		return 0, nil
	}})
	var se *actor.StartError
	if !errors.As(err, &se) {
		t.Fatalf("start with NextState in Init: %v, want a StartError with the panic", err)
	}
}

// TestInitErrorsAreServerErrors: Init's ErrIgnore and Stop end the start
// as a Server's do.
func TestInitErrorsAreServerErrors(t *testing.T) {
	sys := startSystem(t)
	_, err := statem.Start[int](sys, &recorder{init: func(*statem.Context[int]) (int, error) { return 0, actor.ErrIgnore }})
	if !errors.Is(err, actor.ErrIgnore) {
		t.Fatalf("ignore: %v", err)
	}
	_, err = statem.Start[int](sys, &recorder{init: func(*statem.Context[int]) (int, error) { return 0, actor.Stop(actor.Atom("no")) }})
	var se *actor.StartError
	if !errors.As(err, &se) || se.Reason != actor.Atom("no") {
		t.Fatalf("stop: %v", err)
	}
	if statem.New[int](nil) != nil || statem.Functions[int](nil) != nil {
		t.Fatal("New(nil) or Functions(nil) is not nil")
	}
}

// TestTimeoutsOnVirtualTime: in colonytest's deterministic mode a machine's
// timeouts run on the virtual clock: an hour's state timeout and a named
// timeout fire at once in real time, in deadline order, and a state change
// cancels the state timeout it ends.
func TestTimeoutsOnVirtualTime(t *testing.T) {
	colonytest.Check(t, func(rt *rapid.T, sys *actor.System) {
		p, err := colonytest.NewProbe(sys)
		if err != nil {
			rt.Fatal(err)
		}
		pid, err := statem.Start[int](sys, &recorder{
			init: func(c *statem.Context[int]) (int, error) {
				c.StateTimeout(time.Hour, "cancelled by the change")
				c.StartTimeout(statem.NamedTimer("n"), 2*time.Hour, "named")
				c.NextEvent(statem.Internal, "change")
				return 0, nil
			},
			handle: func(c *statem.Context[int], st int, ev statem.Event) {
				switch ev.Type {
				case statem.Internal:
					c.NextState(1)
					c.StateTimeout(time.Hour, "state")
				default:
					c.Send(p.Pid(), fmt.Sprintf("%v %v in %d", ev.Type, ev.Msg, st))
				}
			},
		})
		if err != nil {
			rt.Fatal(err)
		}
		_ = pid
		for _, want := range []string{"state_timeout state in 1", "generic_timeout named in 1"} {
			if err := p.ExpectMsg(3*time.Hour, want); err != nil {
				rt.Fatal(err)
			}
		}
	})
}
