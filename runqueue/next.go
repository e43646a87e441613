package runqueue

import "sync/atomic"

// Next is a scheduler's runnext slot: at most one pid that runs before
// anything in the local ring. The owner sets it; the owner (or, when the owner
// is stuck, the runtime's watchdog) takes it. 0 means empty (no pid packs to
// 0: generation 0 is never issued). The zero value is empty.
type Next struct {
	v atomic.Uint64
}

// Set stores pid and returns the pid it displaced (0 if none), which the
// caller must push to a queue: a displaced pid is still Queued.
func (n *Next) Set(pid uint64) uint64 { return n.v.Swap(pid) }

// Take empties the slot and returns what it held (0 if none).
func (n *Next) Take() uint64 {
	if n.v.Load() == 0 {
		return 0
	}
	return n.v.Swap(0)
}

// Peek returns what the slot holds.
func (n *Next) Peek() uint64 { return n.v.Load() }
