package mailbox

import (
	"testing"
	"time"
)

// TestDepotOneWayFlowAllocatesNothing: a producer that only pushes and a
// consumer that only pops, each with its Cache (the IO poller's Feeder and
// a scheduler): once the first magazines have gone round, a message costs
// no allocation. Without the depot the consumer's full Cache dropped every
// node and the producer allocated one per message.
func TestDepotOneWayFlowAllocatesNothing(t *testing.T) {
	var l Lane
	l.Init()
	var push, pop Cache
	v := any(&l) // boxes without allocating
	round := func() {
		for range 64 {
			l.Push(v, &push)
		}
		for range 64 {
			if _, ok := l.Pop(&pop); !ok {
				t.Fatal("Pop found the lane empty")
			}
		}
	}
	for range 4 * cacheMax / 64 {
		round()
	}
	if a := testing.AllocsPerRun(1000, round); a != 0 {
		t.Fatalf("a one-way flow allocates %.2f times per 64 messages, want 0", a)
	}
}

// TestDepotIsBounded: caches that only put fill the depot to depotMax
// magazines and no further; then a full Cache refuses its node, as before
// there was a depot, and the node is the collector's.
func TestDepotIsBounded(t *testing.T) {
	// Empty the depot of what other tests left, into caches that only get.
	for {
		var c Cache
		if !c.refill() {
			break
		}
	}
	var c Cache
	refused := 0
	for range (depotMax + 2) * cacheMax {
		if !c.put(new(node)) {
			refused++
		}
	}
	depot.mu.Lock()
	full := len(depot.full)
	depot.mu.Unlock()
	if full != depotMax {
		t.Fatalf("the depot holds %d magazines, want its bound %d", full, depotMax)
	}
	if len(c.free) != cacheMax || refused != cacheMax {
		t.Fatalf("cache holds %d nodes with %d puts refused, want %d and %d", len(c.free), refused, cacheMax, cacheMax)
	}
	// And a Cache that gets takes them back, one magazine at a time.
	var g Cache
	for range depotMax * cacheMax {
		n := g.get()
		if n.next.Load() != nil || n.v != nil {
			t.Fatal("a node from the depot still holds a link or a value")
		}
	}
	depot.mu.Lock()
	full = len(depot.full)
	depot.mu.Unlock()
	if full != 0 {
		t.Fatalf("the depot holds %d magazines after %d gets, want 0", full, depotMax*cacheMax)
	}
}

// TestDepotNeverWaits: a Cache whose swap finds the depot held by another
// does not wait for it (a scheduler would wait for a holder that may be
// preempted): a full Cache's put is refused and an empty one's get
// allocates, at once.
func TestDepotNeverWaits(t *testing.T) {
	for { // empty the depot of what other tests left
		var c Cache
		if !c.refill() {
			break
		}
	}
	var full Cache
	for range cacheMax {
		full.put(new(node))
	}
	// Leave one magazine in the depot, so that a get has one to take.
	var one Cache
	for range cacheMax + 1 {
		one.put(new(node))
	}
	depot.mu.Lock()
	done := make(chan [2]bool)
	go func() {
		put := full.put(new(node))
		var empty Cache
		n := empty.get()
		done <- [2]bool{put, len(empty.free) > 0 || n == nil}
	}()
	var r [2]bool
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		depot.mu.Unlock()
		t.Fatal("a Cache's swap waited for the depot's mutex")
	}
	depot.mu.Unlock()
	if depot.nfull.Load() != 1 {
		t.Fatalf("the depot holds %d magazines, want the 1 left for the get", depot.nfull.Load())
	}
	if r[0] {
		t.Fatal("a full Cache's put was taken while the depot was held: it must have waited")
	}
	if r[1] {
		t.Fatal("an empty Cache's get took a magazine while the depot was held: it must have waited")
	}
	if len(full.free) != cacheMax {
		t.Fatalf("the refused put changed the cache: %d nodes, want %d", len(full.free), cacheMax)
	}
}
