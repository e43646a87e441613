package colonytest_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

// A bug only message delivery order shows: a source tells the sink
// "open" and then a relay "note"; the relay forwards the note to the sink,
// which assumes the source's open came first (it did: it was sent first).
// But it was sent to another actor: nothing orders the source's message
// with the relay's, and on a busy System (or across nodes) the forward
// can land first. Every step runs its sends at once, so only holding the
// source's message in flight shows it.

type (
	open    struct{}
	note    struct{}
	relayed struct{}
	kick    struct{}
)

type source struct{ sink, relay actor.Pid }

func (s *source) Receive(c *actor.Context, msg any) {
	if _, ok := msg.(kick); ok {
		c.Send(s.sink, open{})
		c.Send(s.relay, note{})
	}
}

type relay struct{ sink actor.Pid }

func (r *relay) Receive(c *actor.Context, msg any) {
	if _, ok := msg.(note); ok {
		c.Send(r.sink, relayed{})
	}
}

type sink struct{ opened, early bool }

func (k *sink) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case open:
		k.opened = true
	case relayed:
		k.early = k.early || !k.opened
	case actor.Request:
		c.Reply(m, k.early)
	}
}

func relayBody(t *rapid.T, sys *actor.System) {
	sp, err := sys.Spawn(&sink{})
	if err != nil {
		t.Fatal(err)
	}
	rp, err := sys.Spawn(&relay{sink: sp})
	if err != nil {
		t.Fatal(err)
	}
	src, err := sys.Spawn(&source{sink: sp, relay: rp})
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(src, kick{})
	time.Sleep(time.Millisecond) // virtual: everything has run
	early, err := actor.Call[bool](sys, sp, "early?", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if early {
		t.Fatal("the relayed note reached the sink before the source's open")
	}
}

// TestHeldMessageFound: with holds, Find finds the overtaking forward and
// shrinks it to one hold.
func TestHeldMessageFound(t *testing.T) {
	found := colonytest.Find(t, 300, relayBody, colonytest.Holds(2))
	if found == nil {
		t.Fatal("colonytest did not find the overtaking forward in 300 checks")
	}
	t.Log(found)
}

// TestWithoutHoldsNotFound: with holds off, no schedule of whole steps
// shows it (the source's two sends land together).
func TestWithoutHoldsNotFound(t *testing.T) {
	if found := colonytest.Find(t, 100, relayBody, colonytest.Holds(0)); found != nil {
		t.Fatalf("found without holds: %s\n%s", found.Schedule, found.Message)
	}
}
