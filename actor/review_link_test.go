package actor_test

// Link bugs a review found (each test failed before its fix).

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

func passive() actor.Actor { return actor.ActorFunc(func(c *actor.Context, m any) {}) }

// a and b are linked; a re-links b (a no-op in Erlang) while b dies with an
// abnormal reason: non-trapping a must die.
func TestReviewLinkRelinkRacingPeerDeath(t *testing.T) {
	sys := start(t, actor.Config{})
	lost := 0
	for i := 0; i < 100; i++ {
		b, _ := sys.Spawn(passive())
		done := make(chan struct{})
		started := make(chan struct{})
		linked := make(chan struct{})
		a, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
			switch m {
			case "link":
				if err := c.Link(b); err != nil {
					panic(err)
				}
				close(linked)
			case "spam":
				close(started)
				for c.Link(b) == nil {
				}
				close(done)
			}
		}))
		sys.Send(a, "link")
		<-linked
		sys.Send(a, "spam")
		<-started
		sys.Exit(b, "boom")
		<-done
		time.Sleep(time.Millisecond)
		if sys.Alive(a) {
			time.Sleep(50 * time.Millisecond)
			if sys.Alive(a) {
				lost++
				sys.Exit(a, actor.Kill)
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d/2000: a survived the abnormal death of its linked peer", lost)
	}
}

// a and b are linked; a re-links b while a is killed: b must die (killed).
func TestReviewLinkRelinkRacingOwnKill(t *testing.T) {
	sys := start(t, actor.Config{})
	lost := 0
	for i := 0; i < 100; i++ {
		b, _ := sys.Spawn(passive())
		linked := make(chan struct{})
		started2 := make(chan struct{})
		a, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
			switch m {
			case "link":
				c.Link(b)
				close(linked)
			case "spam":
				close(started2)
				for c.Link(b) == nil {
				}
			}
		}))
		sys.Send(a, "link")
		<-linked
		sys.Send(a, "spam")
		<-started2
		sys.Exit(a, actor.Kill)
		deadline := time.Now().Add(100 * time.Millisecond)
		for sys.Alive(b) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if sys.Alive(b) {
			lost++
			sys.Exit(b, actor.Kill)
		}
	}
	if lost > 0 {
		t.Fatalf("%d/2000: b survived the kill of its linked peer", lost)
	}
}
