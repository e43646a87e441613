package mailbox

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestSettleWaitsForInFlightPush: a push that has Swapped head but not yet
// linked hides the messages pushed after it; Pop says empty. Settle waits
// for the link, after which Pop sees the message whose Push returned. A
// zero-timeout selective receive missed it (actor.Context.Receive).
func TestSettleWaitsForInFlightPush(t *testing.T) {
	var l Lane
	l.Init()
	// A producer stopped between its Swap and its link.
	stalled := &node{v: "first"}
	prev := l.head.Swap(stalled)
	// Another producer's Push returns: linked behind the stalled one.
	l.Push("second", nil)
	if _, ok := l.Pop(nil); ok {
		t.Fatal("Pop saw past an unlinked push")
	}
	var linked atomic.Bool
	go func() {
		time.Sleep(20 * time.Millisecond)
		linked.Store(true)
		prev.next.Store(stalled) // the stalled producer links at last
	}()
	l.Settle()
	if !linked.Load() {
		t.Fatal("Settle returned before the in-flight push linked")
	}
	for _, want := range []string{"first", "second"} {
		if v, ok := l.Pop(nil); !ok || v != want {
			t.Fatalf("Pop after Settle: %v, %v; want %s", v, ok, want)
		}
	}
	// Settle of an empty, settled lane returns at once.
	l.Settle()
}

// TestSettleUnderProducers: with producers pushing all the while, every
// message whose Push returned before Settle is popped after it, and Settle
// returns though pushes keep coming. Each producer pushes a fixed count, so
// the test's memory and time are bounded by its design (under -race the
// producers used to outrun the consumer without limit).
func TestSettleUnderProducers(t *testing.T) {
	var l Lane
	l.Init()
	const producers = 4
	const per = 50_000                   // pushes per producer
	var returned [producers]atomic.Int64 // per producer: pushes returned
	for p := range producers {
		go func() {
			for i := int64(0); i < per; i++ {
				l.Push([2]int64{int64(p), i}, nil)
				returned[p].Store(i + 1)
			}
		}()
	}
	seen := [producers]int64{}
	rounds, busyRounds := 0, 0
	for {
		var before [producers]int64
		done := true
		for p := range before {
			before[p] = returned[p].Load()
			done = done && before[p] == per
		}
		l.Settle()
		for {
			v, ok := l.Pop(nil)
			if !ok {
				break
			}
			m := v.([2]int64)
			if m[1] != seen[m[0]] { // per-producer FIFO, nothing lost
				t.Fatalf("producer %d: popped seq %d after %d", m[0], m[1], seen[m[0]])
			}
			seen[m[0]] = m[1] + 1
		}
		rounds++
		for p := range before {
			if seen[p] < before[p] {
				t.Fatalf("round %d: producer %d had %d pushes returned before Settle, %d popped after it", rounds, p, before[p], seen[p])
			}
		}
		if done {
			break // every push had returned before this round's Settle
		}
		busyRounds++
	}
	for p := range seen {
		if seen[p] != per {
			t.Fatalf("producer %d: %d of %d popped", p, seen[p], per)
		}
	}
	t.Logf("%d rounds, %d of them while producers were pushing", rounds, busyRounds)
}
