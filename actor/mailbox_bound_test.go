package actor_test

// MailboxBound: the mailbox's count (what the bound is checked against,
// what Info reports) is settled per activation, not per message, so the
// bound must count only what is queued; and a flood against a bound loses
// nothing.

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/colonyrt/colony/actor"
)

// A handler blocked in a wait (Sleep, Call, selective Receive) has taken the
// message it handles off the queue; the bound must not count it any more.
// It used to, until the activation ended, so a bounded actor blocked on an
// empty queue refused senders.
func TestBoundCountsOnlyQueuedWhileBlocked(t *testing.T) {
	never := func(any) bool { return false }
	for _, tc := range []struct {
		name  string
		block func(c *actor.Context, callee actor.Pid)
		// acceptsMsgs: a message ends the park (the actor takes it into
		// its save queue at once), so the lane is empty again afterwards.
		acceptsMsgs bool
	}{
		{"Sleep", func(c *actor.Context, _ actor.Pid) { c.Sleep(time.Hour) }, false},
		{"Call", func(c *actor.Context, callee actor.Pid) { c.Call(callee, "q", actor.Infinity) }, false},
		{"Receive", func(c *actor.Context, _ actor.Pid) { c.Receive(never, actor.Infinity) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
				// The callee takes requests and never replies.
				callee := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
				pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
					if m == "block" {
						tc.block(c, callee)
					}
				}), actor.MailboxBound(1))
				if err := sys.Send(pid, "block"); err != nil {
					t.Fatal(err)
				}
				synctest.Wait() // pid is blocked in its handler; its queue is empty
				want := "blocked"
				if tc.acceptsMsgs {
					want = "parked"
				}
				if st := sys.SlotState(pid); st != want {
					t.Fatalf("state %s, want %s", st, want)
				}
				if info, _ := sys.Info(pid); info.MailboxLen != 0 {
					t.Errorf("blocked on an empty queue: MailboxLen %d, want 0", info.MailboxLen)
				}
				if err := sys.Send(pid, 1); err != nil {
					t.Fatalf("first send to a blocked actor with an empty queue, bound 1: %v", err)
				}
				if tc.acceptsMsgs {
					return // the receive has taken 1 off the queue: nothing more to count
				}
				// The bound still holds: 1 is queued.
				if err := sys.Send(pid, 2); !errors.Is(err, actor.ErrMailboxFull) {
					t.Errorf("second send, bound 1: %v, want ErrMailboxFull", err)
				}
				if info, _ := sys.Info(pid); info.MailboxLen != 1 {
					t.Errorf("MailboxLen %d, want 1", info.MailboxLen)
				}
			})
		})
	}
}

// Overload: a slow consumer with a bounded mailbox under a flood from several
// senders. Every Send either queues (and is handled, or counted as dropped
// when the consumer dies) or fails with ErrMailboxFull; nothing vanishes.
func TestBoundedMailboxFloodLosesNothing(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	const bound = 16
	var handled atomic.Int64
	gate := make(chan struct{})
	atGate := make(chan struct{}, 2)
	cons, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if msg == "gate" {
			atGate <- struct{}{}
			<-gate
			return
		}
		handled.Add(1)
		c.Sleep(100 * time.Microsecond)
	}), actor.MailboxBound(bound))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(cons, "gate")
	recv(t, atGate)
	var ok, full atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				switch err := sys.Send(cons, i); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, actor.ErrMailboxFull):
					full.Add(1)
				default:
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	inf, _ := sys.Info(cons)
	if inf.MailboxLen > bound {
		t.Errorf("MailboxLen %d over the bound %d", inf.MailboxLen, bound)
	}
	// While the consumer is stuck, the mailbox holds exactly bound messages.
	if ok.Load() != bound {
		t.Errorf("%d sends accepted while the consumer was stuck, want %d", ok.Load(), bound)
	}
	close(gate)
	eventually(t, 5*time.Second, "consumer drained", func() bool { return handled.Load() == ok.Load() })
	// Now fill it again, kill it: what was queued is counted as dropped.
	gate = make(chan struct{})
	sys.Send(cons, "gate")
	recv(t, atGate)
	queued := 0
	for sys.Send(cons, 1) == nil {
		queued++
	}
	before := sys.Stats().Dropped
	w, _ := sys.Monitor(cons)
	sys.Exit(cons, actor.Kill)
	<-w.Done()
	close(gate)
	eventually(t, 5*time.Second, "slot reclaimed", func() bool { return sys.Stats().Live == 0 })
	if d := sys.Stats().Dropped - before; d != uint64(queued) {
		t.Errorf("Dropped grew by %d for a killed actor with %d queued messages", d, queued)
	}
	// A send to the dead pid: dropped, counted, no error.
	before = sys.Stats().Dropped
	if err := sys.Send(cons, 1); err != nil {
		t.Errorf("Send to dead pid: %v", err)
	}
	if d := sys.Stats().Dropped - before; d != 1 {
		t.Errorf("Dropped grew by %d for one send to a dead pid", d)
	}
	t.Logf("ok=%d full=%d queued-at-kill=%d", ok.Load(), full.Load(), queued)
}

// MailboxBound(n): "a Send that finds n messages queued fails". The message
// a handler is busy with is no longer queued, so while it runs (here blocked
// outside the runtime, as a slow consumer's CPU-bound or cgo work would be),
// n more sends must be accepted. Only n-1 were: the bound counted the
// messages the running activation had taken, since consumption was recorded
// per activation; with a consumer that takes several messages in one
// activation, senders were refused while the mailbox was nearly empty.
func TestBoundCountsOnlyQueuedWhileHandlerRuns(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1, WatchdogThreshold: -1})
	entered := make(chan int, 16)
	gate := make(chan struct{})
	cons, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		entered <- msg.(int)
		<-gate
	}), actor.MailboxBound(2))
	if err != nil {
		t.Fatal(err)
	}
	defer close(gate)
	if err := sys.Send(cons, 0); err != nil {
		t.Fatal(err)
	}
	next := 1
	for want := 0; want < 3; want++ {
		if got := recv(t, entered); got != want {
			t.Fatalf("handled %d, want %d", got, want)
		}
		// want is being handled, and the queue holds want+1..next-1: fill
		// it to the bound.
		for next-(want+1) < 2 {
			if err := sys.Send(cons, next); err != nil {
				t.Fatalf("while handling %d with %d queued: %v (the bound is 2)", want, next-(want+1), err)
			}
			next++
		}
		if err := sys.Send(cons, -1); !errors.Is(err, actor.ErrMailboxFull) {
			t.Fatalf("while handling %d, a third queued send: %v, want ErrMailboxFull", want, err)
		}
		gate <- struct{}{}
	}
}
