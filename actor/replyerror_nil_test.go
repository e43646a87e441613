package actor_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// ReplyError with a nil error is a misuse and panics, before the call is
// touched: it used to answer the call as a success with a nil value, so
// `c.ReplyError(req, doWork())` with a doWork that succeeded told the
// caller (nil, nil).

// TestReplyErrorNilInHandler: the handler's misuse crashes its actor with
// a panic that says what was wrong; the caller gets the crash, not a
// silent success.
func TestReplyErrorNilInHandler(t *testing.T) {
	sys := start(t, actor.Config{Logger: func(string, ...any) {}})
	srv, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			c.ReplyError(r, nil)
		}
	}))
	v, err := sys.Call(srv, "job", 10*time.Second)
	var ce *actor.CallExitError
	if !errors.As(err, &ce) {
		t.Fatalf("Call: %v, %v; want the callee's crash (a *CallExitError)", v, err)
	}
	p, ok := ce.Reason.(actor.Panic)
	if !ok || !strings.Contains(fmt.Sprint(p.Value), "ReplyError with a nil error") {
		t.Fatalf("the callee exited with %v, want the ReplyError misuse panic", ce.Reason)
	}
}

// TestReplyErrorNilFromGoroutine: System.ReplyError(req, nil) panics and
// leaves the call unanswered: a Reply after it is still taken.
func TestReplyErrorNilFromGoroutine(t *testing.T) {
	sys := start(t, actor.Config{})
	held := make(chan actor.Request, 1)
	srv, _ := sys.Spawn(actor.ActorFunc(func(_ *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			held <- r
		}
	}))
	panicked := make(chan any, 1)
	go func() {
		r := <-held
		func() {
			defer func() { panicked <- recover() }()
			sys.ReplyError(r, nil)
		}()
		sys.Reply(r, "answer")
	}()
	v, err := sys.Call(srv, "job", 10*time.Second)
	if err != nil || v != "answer" {
		t.Fatalf("Call: %v, %v; want the Reply made after the refused ReplyError", v, err)
	}
	if p := recv(t, panicked); !strings.Contains(fmt.Sprint(p), "ReplyError with a nil error") {
		t.Fatalf("System.ReplyError(req, nil) did not panic as a misuse: recovered %v", p)
	}
}
