package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestSystemReplyError: a plain goroutine answers a held call with an
// error (System.ReplyError), as a handler does with Context.ReplyError; a
// second answer is not taken. A new user's pool had no way to fail a call
// from outside a handler.
func TestSystemReplyError(t *testing.T) {
	sys := start(t, actor.Config{})
	held := make(chan actor.Request, 1)
	srv, _ := sys.Spawn(actor.ActorFunc(func(_ *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			held <- r
		}
	}))
	errBusy := errors.New("busy")
	go func() {
		r := <-held
		if !sys.ReplyError(r, errBusy) {
			t.Error("ReplyError not taken")
		}
		if sys.ReplyError(r, errBusy) || sys.Reply(r, 1) {
			t.Error("a second answer was taken")
		}
	}()
	if _, err := sys.Call(srv, "job", 5*time.Second); !errors.Is(err, errBusy) {
		t.Fatalf("Call: %v, want the error replied", err)
	}
	if sys.ReplyError(actor.Request{}, errBusy) {
		t.Fatal("ReplyError of the zero Request taken")
	}
}
