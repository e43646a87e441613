package actor_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Mailbox retention through the public API: a long-lived actor's mailbox
// must not keep the nodes of the messages it has handled. Before the lane
// cut the link of a node leaving the queue, each actor's embedded stub
// pinned every node pushed to it since its birth: the heap grew by ~24 B
// per message handled, for as long as the actor lived (mailbox/lane.go,
// mailbox/retention_test.go).

// liveHeap returns the heap that stays in use: the least HeapAlloc of a
// few full collections in a row. Retained memory (what these tests look
// for) is in every reading; memory live only for a moment is not. On a
// loaded machine a single reading can catch such a moment: a worker the
// OS descheduled mid-activation still holds its batch, a goroutine is
// between allocating and dropping. TestMailboxSoak read +17.5 MiB once
// that way under a load of 20, and +0.1 MiB at the next checkpoint, with
// the heap profile of the collection after it showing nothing retained.
func liveHeap() uint64 {
	var least uint64
	for i := range 4 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if i == 0 || ms.HeapAlloc < least {
			least = ms.HeapAlloc
		}
	}
	return least
}

// longLived is a set of actors that count what they handle.
type longLived struct {
	sys     *actor.System
	pids    []actor.Pid
	handled atomic.Int64
}

func spawnLongLived(t testing.TB, sys *actor.System, n int) *longLived {
	t.Helper()
	ll := &longLived{sys: sys, pids: make([]actor.Pid, n)}
	for i := range ll.pids {
		pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if _, ok := msg.(int); ok {
				ll.handled.Add(1)
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		ll.pids[i] = pid
	}
	return ll
}

// awaitHandled waits until the actors have handled want messages in all.
func (ll *longLived) awaitHandled(t testing.TB, want int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for ll.handled.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %d of %d messages handled", ll.handled.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// feeder sends perActor messages to every long-lived actor, split among
// its senders, and returns when every send has returned.
type feeder func(perActor int)

// goroutineFeeder sends from plain goroutines (no node cache: sys.Send).
func goroutineFeeder(t testing.TB, ll *longLived, senders int) feeder {
	return func(perActor int) {
		var wg sync.WaitGroup
		for s := range senders {
			wg.Go(func() {
				for i := range perActor {
					for j := s; j < len(ll.pids); j += senders {
						if err := ll.sys.Send(ll.pids[j], i&0xff); err != nil {
							t.Error(err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	}
}

// actorFeeder sends from actors (c.Send, through their scheduler's node
// cache): each of senders actors handles a round request by sending one
// message to each of its share of the long-lived actors (a short
// activation, so the watchdog has nothing to retake).
func actorFeeder(t testing.TB, ll *longLived, senders int) feeder {
	type round struct {
		i    int
		done *sync.WaitGroup
	}
	pids := make([]actor.Pid, senders)
	for s := range pids {
		pid, err := ll.sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			r, ok := msg.(round)
			if !ok {
				return
			}
			defer r.done.Done()
			for j := s; j < len(ll.pids); j += senders {
				if err := c.Send(ll.pids[j], r.i&0xff); err != nil {
					t.Error(err)
					return
				}
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		pids[s] = pid
	}
	return func(perActor int) {
		var wg sync.WaitGroup
		wg.Add(senders * perActor)
		for i := range perActor {
			for _, pid := range pids {
				if err := ll.sys.Send(pid, round{i, &wg}); err != nil {
					t.Fatal(err)
				}
			}
		}
		wg.Wait()
	}
}

// retentionRun feeds the long-lived actors rounds of perRound messages
// each until total messages have been handled (rounds bound what waits in
// the mailboxes), and returns the live heap before (after a warm-up round)
// and after.
func retentionRun(t testing.TB, ll *longLived, feed feeder, perRound, total int) (before, after uint64) {
	t.Helper()
	sent := int64(0)
	round := func() {
		feed(perRound)
		sent += int64(perRound * len(ll.pids))
		ll.awaitHandled(t, sent)
	}
	round() // warm-up: first nodes, caches, run queues
	before = liveHeap()
	for sent < int64(total)+int64(perRound*len(ll.pids)) {
		round()
	}
	after = liveHeap()
	runtime.KeepAlive(ll)
	return before, after
}

// TestMailboxRetention: 1,000 long-lived actors handle 1M messages from
// plain goroutines, then 1M from actors, with one scheduler and with two;
// the live heap may grow by at most 4 MiB (4 B a message; the unfixed
// mailbox grew by ~24 MiB a run). The actors stay alive until after the
// second measure.
func TestMailboxRetention(t *testing.T) {
	const (
		actors   = 1000
		perRound = 100 // messages per actor per round
		total    = 1_000_000
		bound    = 4 << 20
	)
	for _, scheds := range []int{1, 2} {
		for _, from := range []string{"goroutines", "actors"} {
			t.Run(fmt.Sprintf("schedulers=%d/from=%s", scheds, from), func(t *testing.T) {
				// A feeder's activation sends hundreds of messages; under
				// -race on a loaded machine that can pass the default
				// watchdog threshold, which this test is not about.
				sys := start(t, actor.Config{Schedulers: scheds, WatchdogThreshold: time.Second})
				ll := spawnLongLived(t, sys, actors)
				var feed feeder
				if from == "goroutines" {
					feed = goroutineFeeder(t, ll, 2)
				} else {
					feed = actorFeeder(t, ll, 4)
				}
				before, after := retentionRun(t, ll, feed, perRound, total)
				growth := int64(after) - int64(before)
				t.Logf("%d actors, %d messages: live heap %d -> %d bytes (%+d, %.2f B/message)",
					actors, ll.handled.Load(), before, after, growth, float64(growth)/total)
				if growth > bound {
					t.Fatalf("long-lived actors retain their messages' nodes: live heap grew by %d bytes over %d messages (%.1f B/message); bound %d",
						growth, total, float64(growth)/total, bound)
				}
				for _, pid := range ll.pids {
					if !sys.Alive(pid) {
						t.Fatalf("%v died", pid)
					}
				}
			})
		}
	}
}
