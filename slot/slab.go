package slot

// Design note: the slab.
//
// A fixed-capacity table of slots, addressed by a 32-bit index. Storage is
// allocated in chunks of ChunkSize slots the first time an index in the chunk
// is handed out; a chunk never moves and is never freed while the Slab lives,
// so a lookup by index is two loads with no lock, and memory follows the
// high-water mark of live actors rather than the capacity.
//
// Each slot holds its Word and one atomic pointer to the tenant's record
// (type T, owned by the caller). The record is per tenancy: a sender that
// raced the tenant's death can only ever reach the dead tenant's record,
// never the next one's, because it checked the generation in the word and
// then loaded a pointer whose record carries that same generation. The
// garbage collector keeps the dead record alive for as long as such a racer
// holds it.
//
// Free indices: a few shards, each a mutex-guarded LIFO of indices, plus a
// bump pointer for indices never used. A caller names its shard (a scheduler
// allocates from and frees to its own), so the common case takes one
// uncontended lock. LIFO keeps recently used (cache-warm) slots in use. A
// shard that runs dry steals half of a well-stocked shard, else takes a
// batch of never-used indices, else steals from any shard; only when every
// shard is empty and the bump pointer is at capacity is the slab full: no
// free index hides in a shard that Alloc does not look at, though a
// concurrent Alloc's steal in flight can hold up to a batch (freshBatch) of
// indices out of every shard for a moment. (A single shared list was the spawn workload's
// hottest lock: docs/benchmarks.md.)

import (
	"sync"
	"sync/atomic"
)

// ChunkShift sets the chunk size: 1<<ChunkShift slots are allocated at once.
const ChunkShift = 12

// ChunkSize is the number of slots allocated together.
const ChunkSize = 1 << ChunkShift

// Slot is one entry of the slab.
type Slot[T any] struct {
	// Word is the scheduling word; see word.go.
	Word Word
	// rec is the current tenant's record: written by the allocator before
	// Install (published by Install's CAS), cleared by the owner before
	// Reclaim. Read atomically by anyone holding a pid.
	rec atomic.Pointer[T]
}

// Rec returns the record last published in the slot (possibly of a tenant
// that has since died: check its generation).
func (s *Slot[T]) Rec() *T { return s.rec.Load() }

// SetRec stores the tenant's record. Only the slot's owner calls it: the
// allocator before Install, the finishing owner (with nil) before Reclaim.
func (s *Slot[T]) SetRec(r *T) { s.rec.Store(r) }

type chunk[T any] [ChunkSize]Slot[T]

// Slab is a fixed-capacity table of slots. Create it with NewSlab; it may not
// be copied.
type Slab[T any] struct {
	capacity uint32
	// chunks[i] is nil until index i<<ChunkShift is first allocated; set once
	// under mu, read atomically by lookups.
	chunks []atomic.Pointer[chunk[T]]

	mu   sync.Mutex // guards next and chunk growth; never held with a shard's lock
	next uint32     // indices >= next have never been handed out

	shards []shard
}

// shard is one free list. Lock order: at most one shard lock at a time
// (stealing copies out under the victim's lock, then pushes under ours).
type shard struct {
	mu     sync.Mutex
	free   []uint32 // LIFO of vacant indices
	allocs uint64   // Allocs served by this shard, guarded by mu
	frees  uint64   // Frees into this shard, guarded by mu
	_      [64 - 8 - 24 - 16]byte
}

// freshBatch is how many never-used indices a dry shard takes at once.
const freshBatch = 64

// NewSlab returns a slab of the given capacity (rounded up to a whole chunk)
// with one free-list shard. It panics if capacity is not positive: that is a
// caller's misuse.
func NewSlab[T any](capacity int) *Slab[T] { return NewSlabShards[T](capacity, 1) }

// NewSlabShards is NewSlab with n free-list shards (at least 1); Alloc and
// Free take a shard hint in [0, n).
func NewSlabShards[T any](capacity, n int) *Slab[T] {
	if capacity <= 0 {
		panic("slot: NewSlab capacity must be positive")
	}
	if capacity > 1<<31 {
		capacity = 1 << 31
	}
	if n < 1 {
		n = 1
	}
	nc := (capacity + ChunkSize - 1) / ChunkSize
	return &Slab[T]{
		capacity: uint32(capacity),
		chunks:   make([]atomic.Pointer[chunk[T]], nc),
		shards:   make([]shard, n),
	}
}

// Cap returns the capacity.
func (sl *Slab[T]) Cap() int { return int(sl.capacity) }

// Live returns the number of allocated slots. The count is kept per shard
// (a shared atomic counter was a cache line every spawn and exit fought
// over), so under concurrent Alloc and Free it is a sum of per-shard
// snapshots, exact once they stop.
func (sl *Slab[T]) Live() int {
	a, f := sl.Counts()
	return int(a - f)
}

// Counts returns how many Allocs succeeded and how many Frees happened
// since the slab was made (per-shard snapshots, as Live).
func (sl *Slab[T]) Counts() (allocs, frees uint64) {
	for i := range sl.shards {
		h := &sl.shards[i]
		h.mu.Lock()
		allocs += h.allocs
		frees += h.frees
		h.mu.Unlock()
	}
	return allocs, frees
}

// At returns the slot at idx, or nil if idx is out of range or its chunk was
// never allocated (then no pid can name it).
func (sl *Slab[T]) At(idx uint32) *Slot[T] {
	ci := idx >> ChunkShift
	if ci >= uint32(len(sl.chunks)) {
		return nil
	}
	c := sl.chunks[ci].Load()
	if c == nil {
		return nil
	}
	return &c[idx&(ChunkSize-1)]
}

// Alloc hands out a vacant slot, which the caller now owns, preferring
// shard hint (taken modulo the shard count). ok is false when the slab is
// full.
func (sl *Slab[T]) Alloc(hint int) (idx uint32, s *Slot[T], ok bool) {
	h := &sl.shards[uint(hint)%uint(len(sl.shards))]
	h.mu.Lock()
	if n := len(h.free); n > 0 {
		idx = h.free[n-1]
		h.free = h.free[:n-1]
		h.allocs++
		h.mu.Unlock()
		return idx, sl.At(idx), true
	}
	h.mu.Unlock()
	if idx, ok = sl.refill(h); !ok {
		return 0, nil, false
	}
	return idx, sl.At(idx), true
}

// refill finds an index for a dry shard h, in this order: half of another
// shard that holds at least stealMin free indices (reused slots are
// cache-warm, and a shard that only frees — a scheduler whose actors are
// spawned from outside — would otherwise grow the slab to its capacity); a
// batch of never-used indices; any free index of another shard. One is
// returned, the rest pushed on h.
func (sl *Slab[T]) refill(h *shard) (uint32, bool) {
	if idx, ok := sl.steal(h, stealMin); ok {
		return idx, true
	}
	sl.mu.Lock()
	if sl.next < sl.capacity {
		lo := sl.next
		hi := min(lo+freshBatch, sl.capacity, (lo>>ChunkShift+1)<<ChunkShift)
		if lo&(ChunkSize-1) == 0 {
			sl.growLocked(lo >> ChunkShift)
		}
		sl.next = hi
		sl.mu.Unlock()
		h.mu.Lock()
		for i := hi - 1; i > lo; i-- { // LIFO: lo+1 is popped first
			h.free = append(h.free, i)
		}
		h.allocs++
		h.mu.Unlock()
		return lo, true
	}
	sl.mu.Unlock()
	return sl.steal(h, 1)
}

// stealMin is how many free indices a shard must hold before refill takes
// from it in preference to never-used indices.
const stealMin = 16

// steal moves up to half (at most freshBatch) of the first other shard
// holding at least min free indices onto h, and pops one for the caller.
func (sl *Slab[T]) steal(h *shard, min_ int) (uint32, bool) {
	var buf [freshBatch]uint32
	got := buf[:0]
	for i := range sl.shards {
		v := &sl.shards[i]
		if v == h {
			continue
		}
		v.mu.Lock()
		if n := len(v.free); n >= min_ {
			k := min((n+1)/2, freshBatch)
			got = append(got, v.free[n-k:]...)
			v.free = v.free[:n-k]
		}
		v.mu.Unlock()
		if len(got) > 0 {
			break
		}
	}
	h.mu.Lock()
	// A Free to h may have landed meanwhile; either way take the newest.
	h.free = append(h.free, got...)
	n := len(h.free)
	if n == 0 {
		h.mu.Unlock()
		return 0, false
	}
	idx := h.free[n-1]
	h.free = h.free[:n-1]
	h.allocs++
	h.mu.Unlock()
	return idx, true
}

// growLocked allocates chunk ci. Called with mu held.
func (sl *Slab[T]) growLocked(ci uint32) {
	c := new(chunk[T])
	for i := range c {
		c[i].Word.init(1)
	}
	// Release: the initialised words are visible to any At that loads the
	// chunk pointer.
	sl.chunks[ci].Store(c)
}

// Free returns a slot whose word has been reclaimed (Vacant) to shard hint's
// free list. Only the slot's owner calls it, once per Alloc.
func (sl *Slab[T]) Free(idx uint32, hint int) {
	h := &sl.shards[uint(hint)%uint(len(sl.shards))]
	h.mu.Lock()
	h.free = append(h.free, idx)
	h.frees++
	h.mu.Unlock()
}
