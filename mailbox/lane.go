// Design note: the mailbox lane.
//
// Problem. Any number of goroutines send to an actor while at most one
// goroutine — the actor's current owner — consumes. Sends must not take a
// lock, must keep per-sender order, and the owner must be able to decide
// "my mailbox is empty, I may park" without losing a message that is being
// pushed at that very moment.
//
// Rejected. A mutex-guarded slice: every send contends with the consumer. A
// Go channel: bounded, and a full channel blocks the sender, which Erlang's
// send never does. A bounded lock-free ring: overshoots or spins when full.
//
// Protocol: Vyukov's non-intrusive MPSC queue. The queue is a singly linked
// list from tail (a dummy node: already consumed) to head (the newest node).
//
//	Push: n := node{v}; prev := head.Swap(n); prev.next.Store(n)
//	Pop:  next := tail.next.Load(); if next == nil: empty; tail = next; v = next.v
//
// Per-sender FIFO: one producer's Swaps are ordered, and so is the chain they
// build. The hazard is the gap between a producer's Swap and its link store:
// head has moved but tail.next is still nil, so Pop says "empty" although a
// message is on its way ("head == tail does not mean empty" and vice versa).
// The lane never waits for the link. Instead the actor's park protocol
// (actor/proc.go) closes the gap: a producer only checks whether the actor
// needs waking AFTER its link store, and the owner, after publishing Parked,
// compares head with the tail it parked at (ChangedSince), which reads only
// the producer side because the owner no longer owns the consumer side.

package mailbox

import (
	"runtime"
	"sync"
	"sync/atomic"
)

type node struct {
	// next is written once by the producer that pushed the following node
	// (Release) and read by the consumer (Acquire).
	next atomic.Pointer[node]
	// v is written by the producer before the Swap that publishes the node,
	// read and cleared by the consumer after it loads the link.
	v any
}

// Lane is a lock-free multi-producer single-consumer FIFO queue. It must be
// initialised with Init before use and may not be copied after. Push may be
// called from any goroutine; Pop, Empty and Tail only by the single consumer
// that currently owns the lane (ownership is handed over by the slot word).
type Lane struct {
	// head is the most recently pushed node; producers Swap it.
	head atomic.Pointer[node]
	// tail is the last consumed node (a dummy). Owned by the consumer.
	tail *node
	stub node
}

// Init prepares a zero Lane: empty, its dummy the embedded stub. Call it
// once, before the lane is shared.
func (l *Lane) Init() {
	l.head.Store(&l.stub)
	l.tail = &l.stub
}

// Push appends v. It never blocks and never fails. When Push returns, the
// message is linked: a consumer that looks after this point sees it. nc, if
// not nil, supplies a recycled node (see Cache).
func (l *Lane) Push(v any, nc *Cache) {
	var n *node
	if nc != nil {
		n = nc.get()
	} else {
		n = new(node)
	}
	n.v = v
	// Swap is the linearisation point among producers: it orders this
	// message after every message pushed before it (per-sender FIFO).
	prev := l.head.Swap(n)
	// Release: the consumer that loads prev.next sees n.v.
	prev.next.Store(n)
}

// Pop removes the oldest linked message. ok is false if none is linked (a
// producer may be between its Swap and its link; see the design note). nc,
// if not nil, receives the node that stops being the dummy.
func (l *Lane) Pop(nc *Cache) (v any, ok bool) {
	old := l.tail
	next := old.next.Load() // Acquire: pairs with Push's link store.
	if next == nil {
		return nil, false
	}
	l.tail = next
	v = next.v
	next.v = nil // the node is now the dummy; drop the reference for the GC
	// old has left the queue. Once the consumer has moved past it, no
	// producer can touch it: the only producer that ever held old as its
	// prev has already stored old.next (our Acquire load of that store is
	// how we got here), and Settle, the only other reader of links, is the
	// consumer itself and starts from tail. So old is private to us.
	if nc != nil && old != &l.stub && nc.put(old) {
		// Recycled (put reset the link). A Mark naming old (a parked
		// owner's re-check) may then see head == old again after old is
		// pushed anew (ABA), but only after another owner consumed — i.e.
		// after the actor was woken by someone else — and the re-check
		// only matters when nobody else woke it.
		return v, true
	}
	// Not recycled: cut its link, or whatever still holds old — the
	// lane's embedded stub, for its whole life — pins every node pushed
	// after it (a long-lived actor's mailbox kept every node it handled:
	// TestLaneRetention*). A plain write, as in Cache.put: old is private
	// (above), and if it is ever published again (a recycled node) the
	// Swap that publishes it is the Release that orders this write.
	old.next = atomic.Pointer[node]{}
	return v, true
}

// Cache is a free list of lane nodes for one user at a time (not safe for
// concurrent use; it may be handed from goroutine to goroutine with
// whatever orders the hand-off, as actor hands one along with each
// scheduler role): a consumer puts the nodes it is done with, and its own
// pushes reuse them, so a steady message flow allocates nothing but the
// messages themselves. Where the flow goes one way, from a Cache that only
// pushes to one that only pops (an IO poller feeding socket messages to
// actors), the nodes travel back through the depot: a full Cache leaves
// its free list there as a magazine and takes an empty one, and an empty
// Cache takes a full one. The zero Cache is empty.
type Cache struct {
	free []*node
}

// cacheMax is a Cache's capacity, and a magazine's.
const cacheMax = 1024

// depotMax bounds the full magazines the depot keeps: 8 x 1024 nodes of
// 24 bytes, 192 KiB at most, held for the process's life. A put past that
// is refused, and its node is left to the collector.
const depotMax = 8

// depot holds magazines (free lists of cacheMax nodes) between Caches. A
// Cache swaps with it once per cacheMax nodes it puts or gets. Nobody ever
// waits for it: a swap takes its mutex with TryLock, and gives up when
// another holds it (a put is then refused, a get allocates, as if there
// were no depot), because a holder preempted inside the lock would keep a
// scheduler that waited for it from its actors for a whole time slice
// (the watchdog saw 13-27 ms in BenchmarkFanOutFeeder). nfull mirrors
// len(full) so that a Cache can see without the lock that there is
// nothing to take or no room to leave (a one-way flow with no taker fills
// the depot, and then every put of a full Cache would try the lock).
var depot struct {
	mu    sync.Mutex
	full  [][]*node // each of length cacheMax
	empty [][]*node // length 0, capacity cacheMax or more; at most depotMax
	nfull atomic.Int32
}

func (c *Cache) get() *node {
	if len(c.free) == 0 && !c.refill() {
		return new(node)
	}
	n := len(c.free) - 1
	nd := c.free[n]
	c.free = c.free[:n]
	return nd
}

// put keeps n for reuse and reports whether it did (false: the cache and
// the depot are full, and n is left as it was).
func (c *Cache) put(n *node) bool {
	if len(c.free) < cacheMax || c.unload() {
		// The node is private to us now: the Acquire load of its link that
		// moved the consumer past it happens after the producer's link store,
		// and nobody else holds it. So the link is reset with a plain write
		// (an atomic Store is an XCHG on amd64, on every message); the Swap
		// that publishes the node again is the Release that orders it.
		n.next = atomic.Pointer[node]{}
		c.free = append(c.free, n)
		return true
	}
	return false
}

// refill swaps c's empty free list for a full magazine from the depot, if
// it has one and nobody else is using it.
func (c *Cache) refill() bool {
	if depot.nfull.Load() == 0 || !depot.mu.TryLock() {
		return false
	}
	defer depot.mu.Unlock()
	k := len(depot.full)
	if k == 0 {
		return false
	}
	if cap(c.free) >= cacheMax && len(depot.empty) < depotMax {
		depot.empty = append(depot.empty, c.free[:0])
	}
	c.free = depot.full[k-1]
	depot.full[k-1] = nil
	depot.full = depot.full[:k-1]
	depot.nfull.Store(int32(k - 1))
	return true
}

// unload leaves c's full free list in the depot as a magazine, and gives c
// an empty one, if the depot has room and nobody else is using it. The
// nodes' links were reset as they were put, and the mutex orders those
// writes before the next user's.
func (c *Cache) unload() bool {
	if depot.nfull.Load() >= depotMax || !depot.mu.TryLock() {
		return false
	}
	defer depot.mu.Unlock()
	if len(depot.full) >= depotMax {
		return false
	}
	depot.full = append(depot.full, c.free)
	depot.nfull.Store(int32(len(depot.full)))
	if k := len(depot.empty); k > 0 {
		c.free = depot.empty[k-1]
		depot.empty[k-1] = nil
		depot.empty = depot.empty[:k-1]
	} else {
		c.free = make([]*node, 0, cacheMax)
	}
	return true
}

// Empty reports whether no message is linked. Consumer only.
func (l *Lane) Empty() bool { return l.tail.next.Load() == nil }

// Settle waits until every push that had begun (Swapped head) when it was
// called has linked its node, so that Pop then sees every message whose
// Push returned before the call, whatever other pushes were in flight
// ahead of it (the gap of the design note). Consumer only. It walks the
// chain from tail without consuming, yielding the processor while a link
// is missing: a producer is between its two instructions, and only a
// producer descheduled there makes the wait last. Pushes begun after the
// call are not waited for, so a steady stream of senders cannot keep it
// waiting.
func (l *Lane) Settle() {
	h := l.head.Load()
	for n := l.tail; n != h; {
		next := n.next.Load()
		if next == nil {
			runtime.Gosched()
			continue
		}
		n = next
	}
}

// Mark is a position of the consumer, for ChangedSince.
type Mark struct{ n *node }

// Tail returns the consumer's current position. Consumer only.
func (l *Lane) Tail() Mark { return Mark{l.tail} }

// ChangedSince reports whether any producer has pushed (or begun to push)
// since the consumer stood at m. It reads only the producer side, so it is
// safe after the consumer has handed the lane over (the park re-check).
func (l *Lane) ChangedSince(m Mark) bool { return l.head.Load() != m.n }
