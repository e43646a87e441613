package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestSystemReplyError: a plain goroutine answers a held call with an
// error (System.ReplyError), as a handler does with Context.ReplyError; a
// second answer is not taken: a pool's dispatcher fails a call from outside
// a handler.
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

// keeps holds each call unanswered and answers the kept one with an error
// when told to (a cast), reporting whether ReplyError took it.
type keeps struct {
	actor.ServerBase
	kept  actor.Request
	taken chan bool
}

func (s *keeps) HandleCall(c *actor.Context, r actor.Request) { s.kept = r }

func (s *keeps) HandleCast(c *actor.Context, _ any) {
	s.taken <- c.ReplyError(s.kept, errors.New("too late"))
}

// ReplyError to a call that has already ended (here: timed out) is a late
// reply as much as Reply is: Stats.LateReplies counts it (it did not).
func TestLateReplyErrorCounted(t *testing.T) {
	sys := start(t, actor.Config{})
	s := &keeps{taken: make(chan bool, 1)}
	pid, err := actor.StartServer(sys, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Call(pid, "q", 5*time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("call: %v, want ErrTimeout", err)
	}
	actor.Cast(sys, pid, "answer now") // after the Request: same sender, in order
	if recv(t, s.taken) {
		t.Fatal("ReplyError took a reply to a call that had timed out")
	}
	if n := sys.Stats().LateReplies; n != 1 {
		t.Fatalf("Stats.LateReplies = %d after a late ReplyError, want 1", n)
	}
}
