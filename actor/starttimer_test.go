package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// StartTimer delivers Timeout{Ref, Msg} with the ref it returned
// (erlang:start_timer/3), so a receiver tells the timer it armed last from
// one it cancelled too late: the stale one's message was already queued,
// and its Ref is not the current one.
func TestStartTimerCarriesItsRef(t *testing.T) {
	sys := start(t, actor.Config{})
	type seen struct {
		msg     any
		current bool
	}
	got := make(chan seen, 4)
	release := make(chan struct{})
	armed := make(chan actor.TimerRef, 1)
	var current actor.TimerRef
	pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		switch m := m.(type) {
		case string: // re-arm while the first timer's message is queued
			first, err := c.StartTimer(c.Self(), "tick", 0)
			if err != nil {
				t.Error(err)
			}
			armed <- first
			<-release // the zero-delay timer fires meanwhile: its message waits behind us
			if _, pending := c.ReadTimer(first); pending {
				t.Error("the first timer is still pending after its expiry")
			}
			if c.CancelTimer(first) {
				t.Error("a cancel after the expiry reported true")
			}
			current, err = c.StartTimer(c.Self(), "tick", time.Millisecond)
			if err != nil {
				t.Error(err)
			}
		case actor.Timeout:
			got <- seen{m.Msg, m.Ref == current}
		}
	}))
	sys.Send(pid, "arm")
	first := recv(t, armed)
	eventually(t, 5*time.Second, "the first timer fires", func() bool { _, pending := sys.ReadTimer(first); return !pending })
	close(release)
	if s := recv(t, got); s.msg != "tick" || s.current {
		t.Fatalf("first Timeout: %+v; want the stale timer's tick, not the current ref", s)
	}
	if s := recv(t, got); s.msg != "tick" || !s.current {
		t.Fatalf("second Timeout: %+v; want the current timer's tick", s)
	}
	if ref, err := sys.StartTimer(actor.Pid{}, "x", time.Second); err == nil || ref != (actor.TimerRef{}) {
		t.Fatalf("StartTimer to the zero Pid: %v, %v", ref, err)
	}
}

// SendAfterName resolves the name when the timer fires (send_after to an
// atom): a server restarted under the name gets it; a free name drops it.
func TestSendAfterName(t *testing.T) {
	sys := start(t, actor.Config{})
	got := make(chan string, 4)
	tagged := func(tag string) actor.Actor {
		return actor.ActorFunc(func(c *actor.Context, m any) { got <- tag + ":" + m.(string) })
	}
	old := mustSpawn(t, sys, tagged("old"), actor.Name("ticker"))
	ref, err := sys.SendAfterName("ticker", "tick", 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if left, ok := sys.ReadTimer(ref); !ok || left > 50*time.Millisecond {
		t.Fatalf("ReadTimer: %v, %v", left, ok)
	}
	sys.Exit(old, actor.Kill) // the timer outlives the holder...
	eventually(t, 5*time.Second, "the name is free", func() bool { _, ok := sys.Whereis("ticker"); return !ok })
	mustSpawn(t, sys, tagged("new"), actor.Name("ticker")) // ...and reaches the next one
	if m := recv(t, got); m != "new:tick" {
		t.Fatalf("got %q, want new:tick", m)
	}

	dropped := sys.Stats().Dropped
	if _, err := sys.SendAfterName("nobody", "x", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the message to a free name is dropped", func() bool { return sys.Stats().Dropped == dropped+1 })

	ref, _ = sys.SendAfterName("ticker", "cancelled", 20*time.Millisecond)
	if !sys.CancelTimer(ref) {
		t.Fatal("CancelTimer of a pending SendAfterName timer")
	}
	time.Sleep(40 * time.Millisecond) // past its deadline: it must not fire (a slow machine cannot make it)
	select {
	case m := <-got:
		t.Fatalf("a cancelled timer delivered %q", m)
	default:
	}
	if _, err := sys.SendAfterName("", "x", time.Second); !errors.Is(err, actor.ErrBadName) {
		t.Fatalf("empty name: %v", err)
	}
	if _, err := sys.SendAfterName("ticker", "x", -time.Second); !errors.Is(err, actor.ErrNegativeTimeout) {
		t.Fatalf("negative delay: %v", err)
	}
}
