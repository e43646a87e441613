package timers

import (
	"fmt"
	"math/bits"
)

// Exported for tests only.
const (
	SlotBits    = slotBits
	NumLevels   = numLevels
	AheadReport = aheadReport
)

// ToTick and FromTick expose the order-preserving sign flip.
func ToTick(t int64) uint64   { return toTick(t) }
func FromTick(u uint64) int64 { return fromTick(u) }

// Nodes returns how many nodes were handed out (the high-water mark, plus one).
func (w *Wheel[T]) Nodes() int { return int(w.nnodes) }

// CheckInvariants walks every list and verifies THE INVARIANT, the bitmaps,
// the links, the due-list bound, the free list and the count. It returns a
// description of the first violation, or nil.
func (w *Wheel[T]) CheckInvariants() error {
	if w.busy {
		return fmt.Errorf("busy set outside Advance")
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
		if int(h.n) != steps {
			return fmt.Errorf("list %d: count %d, walked %d", list, h.n, steps)
		}
		return nil
	}
	var levels [2]uint16
	for b := uint(0); b < 2; b++ {
		for l := uint(0); l < numLevels; l++ {
			if w.occ[b][l] != 0 {
				levels[b] |= 1 << l
			}
			live := w.bankOf(l) == b
			// An idle level is in the band of the lowest target above
			// it, or of backTo if it is a back level.
			owner := uint(bits.TrailingZeros16(w.tgt &^ (uint16(1)<<(l+1) - 1)))
			if w.back&(1<<l) != 0 {
				owner = uint(w.backTo)
			}
			ahead := !live && owner < numLevels
			for s := uint(0); s < numSlots; s++ {
				list := uint16(b*bankLists + l*numSlots + s)
				empty := w.heads[list].first == 0
				if bit := w.occ[b][l]&(1<<s) != 0; empty == bit {
					return fmt.Errorf("slot (%d,%d) bank %d: list empty=%v but occupancy bit=%v", l, s, b, empty, bit)
				}
				if !empty && !live && !ahead {
					return fmt.Errorf("slot (%d,%d) of idle bank %d holds timers", l, s, b)
				}
				// Live slots obey THE INVARIANT relative to cur; slots
				// refined ahead obey it relative to their target's start.
				c := w.cur
				if ahead {
					c = w.pre[owner].start
				}
				err := walk(list, func(i int32, n *node[T]) error {
					if n.when <= c {
						return fmt.Errorf("node %d in slot (%d,%d) bank %d: deadline %d not after %d (ahead=%v)", i, l, s, b, n.when, c, ahead)
					}
					if got := uint(bits.Len64(n.when^c)-1) / slotBits; got != l {
						return fmt.Errorf("node %d in level %d belongs at level %d (ahead=%v)", i, l, got, ahead)
					}
					if got := uint(n.when>>(l*slotBits)) & slotMask; got != s {
						return fmt.Errorf("node %d in slot %d belongs in slot %d (ahead=%v)", i, s, got, ahead)
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
		}
	}
	if levels != w.levels {
		return fmt.Errorf("level masks %b, bitmaps say %b", w.levels, levels)
	}
	if w.back != 0 {
		if w.tgt&(1<<w.backTo) == 0 || w.tgt&(1<<w.backTo-1) == 0 || w.back>>w.backTo != 0 {
			return fmt.Errorf("back levels %b of target %d: not below it, or it is not a target above the lowest of %b", w.back, w.backTo, w.tgt)
		}
		// No target moves anything while back is set: the bands of the
		// targets below backTo are empty.
		below := w.tgt & (1<<w.backTo - 1)
		if idle := w.idleLevels() & (1<<(bits.Len16(below)-1) - 1) &^ w.back; idle != 0 {
			return fmt.Errorf("idle levels %b, below the targets %b under target %d, hold timers while levels %b move back", idle, below, w.backTo, w.back)
		}
	}
	var prev uint64 // the start of the target below, if any
	for l := uint(0); l < numLevels; l++ {
		p := w.pre[l]
		if w.tgt&(1<<l) == 0 {
			if p != (ahead{}) {
				return fmt.Errorf("level %d: not a target, but pre is %+v", l, p)
			}
			if err := walk(listAhead+uint16(l), func(i int32, n *node[T]) error {
				return fmt.Errorf("node %d on the ahead list of level %d, not a target", i, l)
			}); err != nil {
				return err
			}
			continue
		}
		if p.start <= w.cur || p.start <= prev {
			return fmt.Errorf("target at level %d starts at %d: not after cur %d and the target below (%d)", l, p.start, w.cur, prev)
		}
		prev = p.start
		shift := l * slotBits
		want := w.cur&^(uint64(1)<<(shift+slotBits)-1) | (p.start>>shift&slotMask)<<shift
		if l < aheadLevel || p.start != want || p.start&(uint64(1)<<shift-1) != 0 ||
			p.src != uint16(w.bankOf(l)*bankLists+l*numSlots+uint(p.start>>shift&slotMask)) {
			return fmt.Errorf("target at level %d: src %d start %d is not a live slot start (cur %d)", l, p.src, p.start, w.cur)
		}
		// So at most one target a level: no live slot of level l starts
		// before this one (see retarget).
		if open := p.start - aheadSlots<<(shift-slotBits); w.cur < open {
			return fmt.Errorf("target at level %d: clock %d before its run-up %d", l, w.cur, open)
		}
		for ll := uint(0); ll < l; ll++ { // every live timer below the level is before start
			b := w.bankOf(ll)
			for s := uint(0); s < numSlots; s++ {
				list := uint16(b*bankLists + ll*numSlots + s)
				for i := w.heads[list].first; i != 0; i = w.at(i).next {
					if w.at(i).when >= p.start {
						return fmt.Errorf("live node %d at level %d: deadline %d not before %d", i, ll, w.at(i).when, p.start)
					}
				}
			}
		}
		if err := walk(listAhead+uint16(l), func(i int32, n *node[T]) error {
			if n.when != p.start {
				return fmt.Errorf("node %d on the ahead list of level %d: deadline %d, target starts at %d", i, l, n.when, p.start)
			}
			return nil
		}); err != nil {
			return err
		}
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

// Backlog returns the start of the earliest occupied live slot of level 2 or
// above and the values of its timers, in list order: the timers an Advance
// reaching start moves all at once. target says whether the slot is the
// source slot of a target of Refine (then they are what is left there);
// if not, the slot is crossed unrefined. ok is false if there is no such
// slot.
func (w *Wheel[T]) Backlog() (start int64, vals []T, target, ok bool) {
	l, list, u, ok := w.nextCoarse()
	if !ok {
		return 0, nil, false, false
	}
	for i := w.heads[list].first; i != 0; i = w.at(i).next {
		vals = append(vals, w.at(i).val)
	}
	return fromTick(u), vals, w.tgt&(1<<l) != 0 && w.pre[l].src == list, true
}

// MovingBack is the number of timers that a target has yet to get back
// from the idle levels that a lower target needs (moveBack).
func (w *Wheel[T]) MovingBack() int {
	n := 0
	for back := w.back; back != 0; back &= back - 1 {
		m := uint(bits.TrailingZeros16(back))
		b := w.bankOf(m) ^ 1
		for s := uint(0); s < numSlots; s++ {
			n += int(w.heads[b*bankLists+m*numSlots+s].n)
		}
	}
	return n
}

// CoarseSlot is an occupied live slot of level 2 or above (CoarseSlots).
type CoarseSlot[T any] struct {
	Level     int
	Start     int64 // its start
	Open      int64 // the start of its run-up (Refine)
	N         int   // timers in it
	TargetSrc bool  // it is the source slot of a target of Refine
	Vals      []T   // the values of its timers, in list order
}

// CoarseSlots returns the occupied live slots of level 2 and above, in
// start order, and the starts of the targets of Refine, in start order.
func (w *Wheel[T]) CoarseSlots() (slots []CoarseSlot[T], targets []int64) {
	for l := uint(aheadLevel); l < numLevels; l++ {
		b := w.bankOf(l)
		shift := l * slotBits
		for s := uint(0); s < numSlots; s++ {
			list := uint16(b*bankLists + l*numSlots + s)
			if w.heads[list].first == 0 {
				continue
			}
			start := w.cur&^(uint64(1)<<(shift+slotBits)-1) | uint64(s)<<shift
			var vals []T
			for i := w.heads[list].first; i != 0; i = w.at(i).next {
				vals = append(vals, w.at(i).val)
			}
			slots = append(slots, CoarseSlot[T]{
				Level:     int(l),
				Start:     fromTick(start),
				Open:      fromTick(start - aheadSlots<<(shift-slotBits)),
				N:         int(w.heads[list].n),
				TargetSrc: w.tgt&(1<<l) != 0 && w.pre[l].src == list,
				Vals:      vals,
			})
		}
	}
	for t := w.tgt; t != 0; t &= t - 1 {
		targets = append(targets, fromTick(w.pre[bits.TrailingZeros16(t)].start))
	}
	return slots, targets
}
