package actor_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestBlockingInsideMatchIsRefused: a match func of a selective Receive
// must not wait (Erlang's guards cannot). A Blocking (or Call, Sleep) in
// one opened a wait of its own: it moved the epoch on, so the Receive's
// timeout, armed for the old epoch, woke nobody and the Receive outlived
// its timeout for as long as no message came (for ever here). It is a
// misuse, and panics saying so.
func TestBlockingInsideMatchIsRefused(t *testing.T) {
	sys := start(t, actor.Config{Logger: func(string, ...any) {}})
	out := make(chan error, 1)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if m != "go" {
			return
		}
		defer func() {
			if r := recover(); r != nil {
				out <- errors.New(fmtAny(r))
				panic(r)
			}
		}()
		_, err := c.Receive(func(any) bool {
			c.Blocking(func() (any, error) { return nil, nil }, time.Second)
			return false
		}, time.Minute)
		out <- err
	}))
	sys.Send(pid, "go")
	// Looked at by the match func once the Receive waits (its timeout
	// armed), or, on a machine too slow for the sleep, as the Receive
	// begins: not a sleep-and-hope, the refusal panics either way, and
	// without it the test fails by a hang here. The Receive's minute only
	// keeps its timeout from ending it first, however late "other" comes.
	time.Sleep(50 * time.Millisecond)
	sys.Send(pid, "other")
	select {
	case err := <-out:
		if err == nil || !strings.Contains(err.Error(), "match") {
			t.Fatalf("Blocking inside a match func: %v, want a panic naming the match func", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Receive whose match func waits neither panicked nor returned in 10s")
	}
}

// TestNestedReceiveInsideMatchIsRefused: a Receive inside a match func
// took messages from the save queue that the outer Receive was walking:
// the outer one then returned a message the inner one had already
// returned and lost the one after it.
func TestNestedReceiveInsideMatchIsRefused(t *testing.T) {
	sys := start(t, actor.Config{Logger: func(string, ...any) {}})
	got := make(chan any, 8)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if m != "go" {
			got <- m
			return
		}
		defer func() {
			if r := recover(); r != nil {
				got <- "panic: " + fmtAny(r)
				panic(r)
			}
		}()
		// Put a, b, c in the save queue.
		c.Receive(func(m any) bool { return m == "end" }, actor.Infinity)
		r, _ := c.Receive(func(m any) bool {
			if m == "a" {
				v, _ := c.Receive(func(m any) bool { return m == "b" }, 0)
				got <- v
			}
			return m == "b"
		}, 0)
		got <- r
	}))
	for _, m := range []string{"go", "a", "b", "c", "end"} {
		sys.Send(pid, m)
	}
	deadline := time.After(3 * time.Second)
	var all []any
	for {
		select {
		case v := <-got:
			all = append(all, v)
			if s, ok := v.(string); ok && strings.HasPrefix(s, "panic: ") {
				if !strings.Contains(s, "match") {
					t.Fatalf("panic %q does not name the match func", s)
				}
				return
			}
		case <-deadline:
			t.Fatalf("no panic; the handler saw %v", all)
		}
	}
}

func fmtAny(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if e, ok := v.(error); ok {
		return e.Error()
	}
	return "?"
}
