package mailbox

import (
	"runtime"
	"testing"
)

// Node retention: a node that leaves the queue must not keep its link to the
// node after it. The lane's embedded stub, and any node a consumer keeps,
// would otherwise pin the whole chain of nodes pushed after it, so a
// long-lived actor's mailbox kept every node it ever handled (about 24 MiB
// per million messages before Pop cleared the link).

// retentionMessages is how many messages each case pushes and pops. A
// retained chain costs at least one node (24 bytes) per message, so the
// unfixed lane grew by about 23 MiB per case.
const retentionMessages = 1_000_000

// retentionBound is the heap growth a case may show: well under one byte per
// message, far above the noise of a GC'd heap in a test binary.
const retentionBound = 2 << 20

// liveHeap returns the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// checkFlat runs push/pop rounds of batch messages through a fresh lane
// (push and pop with the caches given) and fails if the live heap grew
// past retentionBound while the lane is still alive.
func checkFlat(t *testing.T, batch int, pushCache, popCache *Cache) {
	t.Helper()
	l := new(Lane)
	l.Init()
	// Warm up: the first nodes, the cache's slice.
	for range 2 * cacheMax {
		l.Push(1, pushCache)
		l.Pop(popCache)
	}
	before := liveHeap()
	for sent := 0; sent < retentionMessages; sent += batch {
		for i := range batch {
			l.Push(i&0xff, pushCache) // small ints box without allocating
		}
		for range batch {
			if _, ok := l.Pop(popCache); !ok {
				t.Fatal("Pop found the lane empty before every push was popped")
			}
		}
	}
	after := liveHeap()
	runtime.KeepAlive(l)
	growth := int64(after) - int64(before)
	t.Logf("%d messages: live heap %d -> %d bytes (%+d)", retentionMessages, before, after, growth)
	if growth > retentionBound {
		t.Fatalf("the lane retains its nodes: live heap grew by %d bytes (%.1f B/message) over %d messages; bound %d",
			growth, float64(growth)/retentionMessages, retentionMessages, retentionBound)
	}
}

// fullCache returns a Cache holding cacheMax nodes: every put is refused.
func fullCache() *Cache {
	c := new(Cache)
	for range cacheMax {
		c.put(new(node))
	}
	return c
}

// TestLaneRetentionNilCache: no cache on either side (a plain goroutine's
// send, the system lane's pop): every node is dropped as it leaves.
func TestLaneRetentionNilCache(t *testing.T) {
	checkFlat(t, 1, nil, nil)
	checkFlat(t, 100, nil, nil)
}

// TestLaneRetentionFullCache: the consumer's cache is full, so the nodes it
// moves past are not recycled (a scheduler fed by plain goroutines, whose
// pushes never take from its cache).
func TestLaneRetentionFullCache(t *testing.T) {
	c := fullCache()
	checkFlat(t, 1, nil, c)
	checkFlat(t, 100, nil, c)
	if len(c.free) != cacheMax {
		t.Fatalf("cache holds %d nodes, want it full (%d)", len(c.free), cacheMax)
	}
}

// TestLaneRetentionCacheWithRoom: one cache on both sides (an actor sending
// to actors on its own scheduler): nodes are recycled, the stub is not.
func TestLaneRetentionCacheWithRoom(t *testing.T) {
	c := new(Cache)
	checkFlat(t, 1, c, c)
	checkFlat(t, 100, c, c)
}

// TestLaneRetentionPopsIntoRoomFromNil: pushes without a cache, pops into a
// cache that fills up along the way (it starts empty, then refuses).
func TestLaneRetentionPopsIntoRoomFromNil(t *testing.T) {
	checkFlat(t, 100, nil, new(Cache))
}

// TestMailboxRetention: the same through a Mailbox, both lanes: user
// messages sent without a cache and popped into a full one, signals on the
// system lane (never cached).
func TestMailboxRetention(t *testing.T) {
	m := new(Mailbox)
	m.Init(0)
	c := fullCache()
	round := func() {
		for i := range 100 {
			if err := m.Send(i&0xff, nil); err != nil {
				t.Fatal(err)
			}
			m.Signal(i & 0xff)
		}
		for range 100 {
			if _, ok := m.Pop(c); !ok {
				t.Fatal("user lane empty too soon")
			}
			if _, ok := m.PopSignal(); !ok {
				t.Fatal("system lane empty too soon")
			}
		}
		m.Consumed(100)
	}
	round()
	before := liveHeap()
	for sent := 0; sent < retentionMessages/2; sent += 100 {
		round()
	}
	after := liveHeap()
	runtime.KeepAlive(m)
	growth := int64(after) - int64(before)
	t.Logf("%d messages and %d signals: live heap %d -> %d bytes (%+d)", retentionMessages/2, retentionMessages/2, before, after, growth)
	if growth > retentionBound {
		t.Fatalf("the mailbox retains its nodes: live heap grew by %d bytes over %d entries; bound %d", growth, retentionMessages, retentionBound)
	}
}
