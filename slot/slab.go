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
// Free indices: a mutex-guarded LIFO stack plus a bump pointer for indices
// never used. LIFO keeps recently used (cache-warm) slots in use. Alloc and
// Free take the mutex once each (measured in docs/benchmarks.md: the spawn
// workload).

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

	mu   sync.Mutex // guards free and next
	free []uint32   // LIFO of vacant indices that have been used before
	next uint32     // indices >= next have never been handed out

	live atomic.Int64 // allocated and not yet freed
}

// NewSlab returns a slab of the given capacity (rounded up to a whole chunk).
// It panics if capacity is not positive: that is a caller's misuse.
func NewSlab[T any](capacity int) *Slab[T] {
	if capacity <= 0 {
		panic("slot: NewSlab capacity must be positive")
	}
	if capacity > 1<<31 {
		capacity = 1 << 31
	}
	n := (capacity + ChunkSize - 1) / ChunkSize
	return &Slab[T]{
		capacity: uint32(capacity),
		chunks:   make([]atomic.Pointer[chunk[T]], n),
	}
}

// Cap returns the capacity.
func (sl *Slab[T]) Cap() int { return int(sl.capacity) }

// Live returns the number of allocated slots.
func (sl *Slab[T]) Live() int { return int(sl.live.Load()) }

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

// Alloc hands out a vacant slot, which the caller now owns. ok is false when
// the slab is full.
func (sl *Slab[T]) Alloc() (idx uint32, s *Slot[T], ok bool) {
	sl.mu.Lock()
	if n := len(sl.free); n > 0 {
		idx = sl.free[n-1]
		sl.free = sl.free[:n-1]
		sl.mu.Unlock()
		sl.live.Add(1)
		return idx, sl.At(idx), true
	}
	if sl.next >= sl.capacity {
		sl.mu.Unlock()
		return 0, nil, false
	}
	idx = sl.next
	sl.next++
	if idx&(ChunkSize-1) == 0 {
		sl.growLocked(idx >> ChunkShift)
	}
	sl.mu.Unlock()
	sl.live.Add(1)
	return idx, sl.At(idx), true
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

// Free returns a slot whose word has been reclaimed (Vacant) to the free
// list. Only the slot's owner calls it, once per Alloc.
func (sl *Slab[T]) Free(idx uint32) {
	sl.mu.Lock()
	sl.free = append(sl.free, idx)
	sl.mu.Unlock()
	sl.live.Add(-1)
}
