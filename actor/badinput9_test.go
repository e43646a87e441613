package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestBadInput9ForeignTimerRef: a TimerRef names a timer of the System that
// made it. Given to another System's CancelTimer or ReadTimer it names no
// timer there: false, and that System's own timers are untouched. (The
// wheel's handles are numbered per System from the same start, so a ref
// from one System matched a timer of another: CancelTimer cancelled it.)
func TestBadInput9ForeignTimerRef(t *testing.T) {
	a := start(t, actor.Config{Schedulers: 1})
	b := start(t, actor.Config{Schedulers: 1})
	got := make(chan any, 4)
	sink := func(sys *actor.System) actor.Pid {
		return mustSpawn(t, sys, actor.ActorFunc(func(_ *actor.Context, m any) { got <- m }))
	}
	pa, pb := sink(a), sink(b)
	for _, kind := range []string{"SendAfter", "StartTimer", "SendInterval"} {
		arm := func(sys *actor.System, pid actor.Pid, msg any) actor.TimerRef {
			t.Helper()
			var ref actor.TimerRef
			var err error
			switch kind {
			case "SendAfter":
				ref, err = sys.SendAfter(pid, msg, time.Hour)
			case "StartTimer":
				ref, err = sys.StartTimer(pid, msg, time.Hour)
			case "SendInterval":
				ref, err = sys.SendInterval(pid, msg, time.Hour)
			}
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			return ref
		}
		ra := arm(a, pa, "a")
		rb := arm(b, pb, "b")
		if _, ok := b.ReadTimer(ra); ok {
			t.Errorf("%s: System b's ReadTimer read a's timer", kind)
		}
		if b.CancelTimer(ra) {
			t.Errorf("%s: System b's CancelTimer of a's ref reported a timer cancelled", kind)
		}
		if _, ok := b.ReadTimer(rb); !ok {
			t.Errorf("%s: b's own timer is gone after b.CancelTimer of a's ref", kind)
		}
		if _, ok := a.ReadTimer(ra); !ok {
			t.Errorf("%s: a's timer is gone after b.CancelTimer of it", kind)
		}
		inActor(t, b, func(c *actor.Context) {
			if c.CancelTimer(ra) {
				t.Errorf("%s: Context.CancelTimer of another System's ref reported true", kind)
			}
		})
		if !a.CancelTimer(ra) || !b.CancelTimer(rb) {
			t.Errorf("%s: a timer was not pending for its own System's CancelTimer", kind)
		}
	}
	select {
	case m := <-got:
		t.Fatalf("a cancelled timer sent %v", m)
	default:
	}
	if err := b.Send(pa, 1); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("sanity: Send of a's pid through b: %v", err)
	}
}
