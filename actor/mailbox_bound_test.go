package actor_test

// The mailbox's count (what MailboxBound is checked against, what Info
// reports) is settled per activation, not per message. Two bugs a review
// found in that accounting are pinned here (each test failed before its
// fix).

import (
	"errors"
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

// Context.Info's MailboxLen is process_info(self(), message_queue_len): the
// messages still to be taken, not the one being handled nor the others this
// activation has already taken; messages a selective receive skipped still
// count. (Info read the mailbox's count, which the activation settles when
// it ends.)
func TestContextInfoMailboxLenIsExact(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		lens := make(chan []int, 1)
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			mlen := func() int {
				info, err := c.Info()
				if err != nil {
					t.Errorf("Context.Info: %v", err)
				}
				return info.MailboxLen
			}
			switch m {
			case "hold":
				c.Sleep(time.Second) // the test queues a, b, probe, c meanwhile
			case "probe":
				// This activation has taken a, b and probe; c is queued.
				got := []int{mlen()}
				c.Send(c.Self(), "y")
				c.Send(c.Self(), "x")
				got = append(got, mlen()) // c, y, x
				if m, err := c.Receive(func(m any) bool { return m == "x" }, 0); m != "x" || err != nil {
					t.Errorf("Receive: (%v, %v), want x", m, err)
				}
				got = append(got, mlen()) // c and y, skipped
				c.Sleep(time.Millisecond)
				got = append(got, mlen()) // the same after a wait
				lens <- got
			}
		}))
		if err := sys.Send(pid, "hold"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if st := sys.SlotState(pid); st != "blocked" {
			t.Fatalf("state %s, want blocked", st)
		}
		for _, m := range []string{"a", "b", "probe", "c"} {
			if err := sys.Send(pid, m); err != nil {
				t.Fatal(err)
			}
		}
		got := <-lens
		want := []int{1, 3, 2, 2}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("MailboxLen from the handler: %v, want %v", got, want)
			}
		}
	})
}
