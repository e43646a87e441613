package actor_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestCausalOrderAcrossSenders: a message is in the receiver's mailbox
// when Send returns, so a message sent after that, by another sender that
// learned of the first send through a message, arrives after it (the
// order docs/guarantees.md promises across senders on one System). A sends
// m1 to C and then tells B, B sends m2 to C: C must take m1 first, in
// every round, with A, B and C on different schedulers.
func TestCausalOrderAcrossSenders(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	const rounds = 20000
	type m1 struct{ i int }
	type m2 struct{ i int }
	type relay struct{ i int }
	bad := make(chan string, 1)
	done := make(chan struct{})
	var c actor.Pid
	last := -1
	c, _ = sys.Spawn(actor.ActorFunc(func(_ *actor.Context, m any) {
		switch m := m.(type) {
		case m1:
			last = m.i
		case m2:
			if last < m.i { // m1{i} not taken yet (A's m1s arrive in order)
				select {
				case bad <- "m2 before m1":
				default:
				}
			}
			if m.i == rounds-1 {
				close(done)
			}
		}
	}))
	b, _ := sys.Spawn(actor.ActorFunc(func(ctx *actor.Context, m any) {
		if r, ok := m.(relay); ok {
			ctx.Send(c, m2(r))
		}
	}))
	a, _ := sys.Spawn(actor.ActorFunc(func(ctx *actor.Context, m any) {
		i := m.(int)
		ctx.Send(c, m1{i})
		ctx.Send(b, relay{i})
		if i+1 < rounds {
			ctx.Send(ctx.Self(), i+1)
		}
	}))
	sys.Send(a, 0)
	select {
	case <-done:
	case msg := <-bad:
		t.Fatal(msg)
	case <-time.After(30 * time.Second):
		t.Fatal("timed out")
	}
	select {
	case msg := <-bad:
		t.Fatal(msg)
	default:
	}
}
