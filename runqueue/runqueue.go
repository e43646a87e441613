// Design note: run queues.
//
// Problem. N schedulers pop runnable actors (as packed pids: pointer-free
// uint64 values, so the queues cost the garbage collector nothing to scan).
// Most pushes come from the scheduler itself (an actor it ran woke another),
// so the common case should touch only scheduler-local memory; an idle
// scheduler must still be able to find work anywhere, and a push from outside
// the system (a plain goroutine calling Send) has no local queue.
//
// Rejected. One MPMC queue for everything: simplest, but every push and pop
// of every scheduler contends on the same cache lines (measured in
// docs/benchmarks.md, "run queue"). A channel per scheduler: cannot be
// stolen from.
//
// Protocol: Go's own runq design (runtime/proc.go runqput/runqget/runqsteal),
// which has years of scrutiny behind it.
//   - Local: a 256-entry ring per scheduler. Only the owner pushes (stores the
//     entry, then publishes tail with a release store). Anyone pops by CAS on
//     head: the owner from the front, a thief grabbing half at once. A full
//     ring moves half of itself plus the new entry to the global queue in one
//     lock acquisition.
//   - Global: a mutex-guarded FIFO, for pushes from outside a scheduler and
//     for overflow. Schedulers take batches from it.
//   - Runnext (next.go): one slot per scheduler for the actor just woken by
//     the running actor's send, so a request/response pair ping-pongs on one
//     core with a hot cache.
//
// The hard part is the thief racing the owner: a thief reads entries, then
// CASes head past them; if the owner (or another thief) moved head first the
// CAS fails and the read entries are discarded, never used. Entries are
// atomics so that this benign read race is also race-detector clean.
//
// Invariant owned by the caller (actor/): a pid is in at most one queue, at
// most once — every push pairs with a transition of its slot word into
// Queued, and only the scheduler that pops it moves it out.

package runqueue

import (
	"sync"
	"sync/atomic"
)

// LocalSize is the capacity of a Local ring.
const LocalSize = 256

// Local is a per-scheduler ring. The zero value is an empty ring. It may not
// be copied.
type Local struct {
	// head is the next entry to pop; advanced by CAS by the owner and thieves.
	head atomic.Uint32
	_    [60]byte // keep head and tail on separate cache lines: thieves CAS head
	// tail is the next free entry; written only by the owner (release store),
	// read by thieves (acquire load).
	tail atomic.Uint32
	_    [60]byte
	buf  [LocalSize]atomic.Uint64
}

// Len returns a snapshot of the number of queued entries.
func (q *Local) Len() int {
	for {
		h := q.head.Load()
		t := q.tail.Load()
		if q.head.Load() == h {
			return int(t - h)
		}
	}
}

// Push appends pid. Owner only. If the ring is full, half of it plus pid move
// to g in one batch.
func (q *Local) Push(pid uint64, g *Global) {
	for {
		h := q.head.Load() // Acquire: synchronise with thieves' CAS.
		t := q.tail.Load()
		if t-h < LocalSize {
			q.buf[t%LocalSize].Store(pid)
			q.tail.Store(t + 1) // Release: the entry is visible to whoever sees the tail.
			return
		}
		if q.pushSlow(pid, h, t, g) {
			return
		}
		// The ring was not full after all (a thief took some); retry.
	}
}

// pushSlow moves half the ring and pid to the global queue.
func (q *Local) pushSlow(pid uint64, h, t uint32, g *Global) bool {
	n := (t - h) / 2
	if n != LocalSize/2 {
		panic("runqueue: pushSlow on a ring that is not full")
	}
	var batch [LocalSize/2 + 1]uint64
	for i := uint32(0); i < n; i++ {
		batch[i] = q.buf[(h+i)%LocalSize].Load()
	}
	if !q.head.CompareAndSwap(h, h+n) { // Release: commits the take.
		return false
	}
	batch[n] = pid
	g.PushBatch(batch[:n+1])
	return true
}

// Pop removes the front entry. Safe for the owner; thieves use StealInto.
func (q *Local) Pop() (uint64, bool) {
	for {
		h := q.head.Load()
		t := q.tail.Load()
		if t == h {
			return 0, false
		}
		pid := q.buf[h%LocalSize].Load()
		if q.head.CompareAndSwap(h, h+1) { // Release: commits the take.
			return pid, true
		}
	}
}

// Drain removes every entry and hands it to f. Safe from any goroutine (it
// only consumes from the front).
func (q *Local) Drain(f func(uint64)) {
	for {
		pid, ok := q.Pop()
		if !ok {
			return
		}
		f(pid)
	}
}

// grab takes up to half of q's entries, at most limit, into batch. Any
// goroutine.
func (q *Local) grab(batch *[LocalSize]uint64, limit uint32) uint32 {
	for {
		h := q.head.Load()
		t := q.tail.Load()
		n := t - h
		n -= n / 2
		n = min(n, limit)
		if n == 0 {
			return 0
		}
		if n > LocalSize/2 { // read an inconsistent h, t pair
			continue
		}
		for i := uint32(0); i < n; i++ {
			batch[i] = q.buf[(h+i)%LocalSize].Load()
		}
		if q.head.CompareAndSwap(h, h+n) {
			return n
		}
	}
}

// StealInto moves about half of victim's entries into q (owned by the
// caller; as many as fit) and returns one of them to run now.
func (q *Local) StealInto(victim *Local) (uint64, bool) {
	var batch [LocalSize]uint64
	// Only the owner pushes to q, so its free room can only grow meanwhile.
	room := LocalSize - uint32(q.Len()) + 1 // +1: one entry is returned, not stored
	n := victim.grab(&batch, room)
	if n == 0 {
		return 0, false
	}
	n--
	pid := batch[n]
	if n == 0 {
		return pid, true
	}
	h := q.head.Load()
	t := q.tail.Load()
	if t-h+n > LocalSize {
		panic("runqueue: steal into a ring without room")
	}
	for i := uint32(0); i < n; i++ {
		q.buf[(t+i)%LocalSize].Store(batch[i])
	}
	q.tail.Store(t + n) // Release: publishes the stolen entries.
	return pid, true
}

// Global is the shared FIFO. The zero value is an empty queue.
type Global struct {
	mu   sync.Mutex
	buf  []uint64 // ring storage, guarded by mu
	head int      // guarded by mu
	n    int      // guarded by mu
	size atomic.Int64
}

// Len returns a snapshot of the length; one atomic load, so schedulers can
// poll it cheaply.
func (g *Global) Len() int { return int(g.size.Load()) }

// Push appends one pid.
func (g *Global) Push(pid uint64) {
	g.mu.Lock()
	g.pushLocked(pid)
	g.size.Store(int64(g.n))
	g.mu.Unlock()
}

// PushBatch appends pids in order.
func (g *Global) PushBatch(pids []uint64) {
	g.mu.Lock()
	for _, p := range pids {
		g.pushLocked(p)
	}
	g.size.Store(int64(g.n))
	g.mu.Unlock()
}

func (g *Global) pushLocked(pid uint64) {
	if g.n == len(g.buf) {
		nb := make([]uint64, max(64, 2*len(g.buf)))
		for i := 0; i < g.n; i++ {
			nb[i] = g.buf[(g.head+i)%len(g.buf)]
		}
		g.buf, g.head = nb, 0
	}
	g.buf[(g.head+g.n)%len(g.buf)] = pid
	g.n++
}

// Pop removes the front pid.
func (g *Global) Pop() (uint64, bool) {
	if g.size.Load() == 0 {
		return 0, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n == 0 {
		return 0, false
	}
	pid := g.popLocked()
	g.size.Store(int64(g.n))
	return pid, true
}

func (g *Global) popLocked() uint64 {
	pid := g.buf[g.head]
	g.head = (g.head + 1) % len(g.buf)
	g.n--
	return pid
}

// PopBatch takes a fair share for one of nsched schedulers: it returns one
// pid to run now and moves up to half a ring's worth more into local (owned
// by the caller).
func (g *Global) PopBatch(local *Local, nsched int) (uint64, bool) {
	if g.size.Load() == 0 {
		return 0, false
	}
	var batch [LocalSize / 2]uint64
	g.mu.Lock()
	if g.n == 0 {
		g.mu.Unlock()
		return 0, false
	}
	n := g.n/max(nsched, 1) + 1
	n = min(n, g.n, LocalSize/2)
	for i := 0; i < n; i++ {
		batch[i] = g.popLocked()
	}
	g.size.Store(int64(g.n))
	g.mu.Unlock()
	// Outside the lock: a full local ring spills back into g.
	for _, p := range batch[1:n] {
		local.Push(p, g)
	}
	return batch[0], true
}
