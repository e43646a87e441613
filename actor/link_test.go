package actor_test

// Links racing deaths, kills and each other: re-linking, unlinking from
// an orphaned handler, link and unlink at once, a re-link of a dying peer.

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

func passive() actor.Actor { return actor.ActorFunc(func(c *actor.Context, m any) {}) }

// a and b are linked; a re-links b (a no-op in Erlang) while b dies with an
// abnormal reason: non-trapping a must die.
func TestRelinkRacingPeerDeathKillsCaller(t *testing.T) {
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
		w, err := sys.Monitor(a)
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(a, "spam")
		<-started
		sys.Exit(b, "boom")
		<-done
		select {
		case <-w.Done():
		case <-time.After(10 * time.Second):
			lost++
			sys.Exit(a, actor.Kill)
		}
		if lost > 0 {
			break
		}
	}
	if lost > 0 {
		t.Fatalf("%d/100: a survived the abnormal death of its linked peer", lost)
	}
}

// a and b are linked; a re-links b while a is killed: b must die (killed).
func TestRelinkRacingOwnKillKillsPeer(t *testing.T) {
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
		w, err := sys.Monitor(b)
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(a, "spam")
		<-started2
		sys.Exit(a, actor.Kill)
		select {
		case <-w.Done():
		case <-time.After(10 * time.Second):
			lost++
			sys.Exit(b, actor.Kill)
		}
		if lost > 0 {
			break
		}
	}
	if lost > 0 {
		t.Fatalf("%d/100: b survived the kill of its linked peer", lost)
	}
}

// a and b are linked; a is killed while its handler runs in a plain Go loop,
// and the orphaned handler then unlinks b. A dead process cannot unlink, so
// the link's exit signal is delivered: b must die (killed). Exit runs the
// finaliser on the calling goroutine, which CASes b's latch if it signals
// b, so once Exit has returned and the handler's Unlink has returned,
// Alive(b) is final: no sleep.
func TestOrphanUnlinkAfterKillStillSignals(t *testing.T) {
	sys := start(t, actor.Config{})
	const n = 200
	lost := 0
	for i := 0; i < n; i++ {
		b, _ := sys.Spawn(passive())
		linked := make(chan struct{})
		started := make(chan struct{})
		unlinked := make(chan struct{})
		a, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
			switch m {
			case "link":
				if err := c.Link(b); err != nil {
					panic(err)
				}
				close(linked)
			case "orphan":
				close(started)
				for sys.Alive(c.Self()) { // orphaned by the kill
				}
				c.Unlink(b)
				close(unlinked)
			}
		}))
		sys.Send(a, "link")
		recv(t, linked)
		sys.Send(a, "orphan")
		recv(t, started)
		sys.Exit(a, actor.Kill)
		recv(t, unlinked)
		if sys.Alive(b) {
			lost++
			sys.Exit(b, actor.Kill)
		}
	}
	if lost > 0 {
		t.Fatalf("%d/%d: b survived the kill of its linked peer, whose orphaned handler unlinked it", lost, n)
	}
}

// a links b while b unlinks a, both at once from their handlers: the end
// state is both halves of the link or neither, so Info agrees on both sides
// (it counted a half-made link on one side only).
func TestLinkRacingPeerUnlinkAgreesOnBothSides(t *testing.T) {
	sys := start(t, actor.Config{})
	const n = 300
	bad := 0
	for i := 0; i < n; i++ {
		var arrived atomic.Int32
		done := make(chan struct{}, 2)
		// racer meets the other racer, then runs op on the pid it was sent.
		racer := func(op func(c *actor.Context, peer actor.Pid) error) actor.Actor {
			return actor.ActorFunc(func(c *actor.Context, m any) {
				if peer, ok := m.(actor.Pid); ok {
					arrived.Add(1)
					for arrived.Load() < 2 {
					}
					if err := op(c, peer); err != nil {
						panic(err)
					}
					done <- struct{}{}
				}
			})
		}
		linker := racer((*actor.Context).Link)
		unlinker := racer((*actor.Context).Unlink)
		if i%2 == 1 {
			linker, unlinker = unlinker, linker // spawn order decides which node is older
		}
		a, _ := sys.Spawn(linker)
		b, _ := sys.Spawn(unlinker)
		if i%2 == 1 {
			a, b = b, a
		}
		sys.Send(a, b)
		sys.Send(b, a)
		recv(t, done)
		recv(t, done)
		ia, erra := sys.Info(a)
		ib, errb := sys.Info(b)
		if erra != nil || errb != nil {
			t.Fatalf("Info: %v, %v", erra, errb)
		}
		if ia.Links != ib.Links {
			bad++
		}
		sys.Exit(a, actor.Kill)
		sys.Exit(b, actor.Kill)
	}
	if bad > 0 {
		t.Fatalf("%d/%d: Link racing the peer's Unlink left the link on one side only", bad, n)
	}
}

// gateCloser is a resource held by an actor (System.Hold) whose Close, run
// by the actor's finaliser after the exit latch and before the actor's links
// are collected, reports that it runs and then waits for the gate: a
// deterministic window in which the actor is dead to lookups but its link
// record is still open.
type gateCloser struct {
	closing chan struct{}
	gate    chan struct{}
}

func newGateCloser() *gateCloser {
	return &gateCloser{closing: make(chan struct{}), gate: make(chan struct{})}
}

func (g *gateCloser) Close() error {
	close(g.closing)
	<-g.gate
	return nil
}

// a traps exits and is linked to b; b dies with reason boom, and before b's
// finaliser has collected its links, a links b again. The link exists (a
// still holds it, and b's exit signal is on its way), so the Link is a
// no-op, as link/1 is for an existing link: it returns nil, and a gets
// exactly one Exit from b, with boom. It used to return ErrNoProc and
// deliver Exit{b, noproc} as well: two exit messages for one linked death.
func TestRelinkDyingPeerGivesOneExit(t *testing.T) {
	sys := start(t, actor.Config{})
	b, _ := sys.Spawn(passive())
	g := newGateCloser()
	if _, err := sys.Hold(b, g); err != nil {
		t.Fatal(err)
	}
	linked := make(chan error, 2)
	exits := make(chan actor.Exit, 4)
	a, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch m := m.(type) {
		case string:
			linked <- c.Link(b)
		case actor.Exit:
			exits <- m
		}
	}), actor.TrapExit())
	sys.Send(a, "link")
	if err := recv(t, linked); err != nil {
		t.Fatal(err)
	}
	died := make(chan struct{})
	go func() { sys.Exit(b, actor.Atom("boom")); close(died) }()
	recv(t, g.closing) // b is dead to lookups; its links are not collected yet
	sys.Send(a, "relink")
	err := recv(t, linked)
	close(g.gate)
	recv(t, died)
	if err != nil {
		t.Errorf("Link to a linked peer that is dying = %v, want nil (the link exists)", err)
	}
	// The first Exit, however long it takes; then 50 ms more for a second
	// one (there must be none).
	got := []actor.Exit{recv(t, exits)}
	timeout := time.After(50 * time.Millisecond)
	for collecting := true; collecting; {
		select {
		case x := <-exits:
			got = append(got, x)
		case <-timeout:
			collecting = false
		}
	}
	sys.Exit(a, actor.Kill)
	if len(got) != 1 || got[0] != (actor.Exit{From: b, Reason: actor.Atom("boom")}) {
		t.Fatalf("a got %v, want exactly one Exit from b with boom", got)
	}
}
