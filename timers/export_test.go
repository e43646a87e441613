package timers

import (
	"fmt"
	"math/bits"
)

// Exported for tests only.
const (
	SlotBits  = slotBits
	NumLevels = numLevels
)

// ToTick and FromTick expose the order-preserving sign flip.
func ToTick(t int64) uint64   { return toTick(t) }
func FromTick(u uint64) int64 { return fromTick(u) }

// Nodes returns the size of the node slice (the high-water mark, plus one).
func (w *Wheel[T]) Nodes() int { return int(w.nnodes) }

// CheckInvariants walks every list and verifies THE INVARIANT, the bitmaps,
// the links, the due-list bound, the free list and the count. It returns a
// description of the first violation, or nil.
func (w *Wheel[T]) CheckInvariants() error {
	if w.busy {
		return fmt.Errorf("busy set outside Advance")
	}
	if w.slot != 0 {
		return fmt.Errorf("slot = %d outside Advance", w.slot)
	}
	if w.heads[listDraining] != (listHead{}) {
		return fmt.Errorf("draining list not empty outside Advance")
	}
	seen := 0
	walk := func(list uint16, check func(i int32, n *node[T]) error) error {
		h := w.heads[list]
		if (h.first == 0) != (h.last == 0) {
			return fmt.Errorf("list %d: first %d last %d", list, h.first, h.last)
		}
		prev := int32(0)
		steps := 0
		for i := h.first; i != 0; i = w.at(i).next {
			if steps++; steps > int(w.nnodes) {
				return fmt.Errorf("list %d: cycle", list)
			}
			n := w.at(i)
			if n.prev != prev {
				return fmt.Errorf("list %d node %d: prev %d, want %d", list, i, n.prev, prev)
			}
			if n.list != list {
				return fmt.Errorf("node %d on list %d says list %d", i, list, n.list)
			}
			if n.seq == 0 || n.seq > w.seq {
				return fmt.Errorf("node %d: pending with seq %d (last %d)", i, n.seq, w.seq)
			}
			if err := check(i, n); err != nil {
				return err
			}
			seen++
			prev = i
		}
		if h.last != prev {
			return fmt.Errorf("list %d: last %d, walked to %d", list, h.last, prev)
		}
		return nil
	}
	var levels uint16
	for l := uint(0); l < numLevels; l++ {
		if w.occ[l] != 0 {
			levels |= 1 << l
		}
		for s := uint(0); s < numSlots; s++ {
			list := uint16(l*numSlots + s)
			empty := w.heads[list].first == 0
			if bit := w.occ[l]&(1<<s) != 0; empty == bit {
				return fmt.Errorf("slot (%d,%d): list empty=%v but occupancy bit=%v", l, s, empty, bit)
			}
			err := walk(list, func(i int32, n *node[T]) error {
				if n.when <= w.cur {
					return fmt.Errorf("node %d in slot (%d,%d): deadline %d not after cur %d", i, l, s, n.when, w.cur)
				}
				if got := uint(bits.Len64(n.when^w.cur)-1) / slotBits; got != l {
					return fmt.Errorf("node %d in level %d belongs at level %d", i, l, got)
				}
				if got := uint(n.when>>(l*slotBits)) & slotMask; got != s {
					return fmt.Errorf("node %d in slot %d belongs in slot %d", i, s, got)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	if levels != w.levels {
		return fmt.Errorf("level mask %b, bitmaps say %b", w.levels, levels)
	}
	err := walk(listDue, func(i int32, n *node[T]) error {
		if n.when > w.cur {
			return fmt.Errorf("due node %d: deadline %d after cur %d", i, n.when, w.cur)
		}
		if n.when < w.dueMin {
			return fmt.Errorf("due node %d: deadline %d below dueMin %d", i, n.when, w.dueMin)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if seen != w.n {
		return fmt.Errorf("walked %d pending nodes, Len says %d", seen, w.n)
	}
	free := 0
	for i := w.free; i != 0; i = w.at(i).next {
		if free++; free > int(w.nnodes) {
			return fmt.Errorf("free list cycle")
		}
		if n := w.at(i); n.seq != 0 || n.list != listFree {
			return fmt.Errorf("free node %d: seq %d list %d", i, n.seq, n.list)
		}
	}
	if int(w.nnodes) > 0 && free+seen != int(w.nnodes)-1 {
		return fmt.Errorf("%d free + %d pending != %d nodes", free, seen, int(w.nnodes)-1)
	}
	return nil
}
