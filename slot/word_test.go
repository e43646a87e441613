package slot

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"
)

// model is the reference: the same fields, as plain values, with the
// transition table written out as a switch per operation.
type model struct {
	gen, epoch uint32
	st         State
}

func (m *model) word() uint64 { return Pack(m.gen, m.epoch, m.st) }

// mustPanic runs f and reports whether it panicked with a broken-invariant
// message.
func mustPanic(f func()) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			if s, ok := r.(string); ok && strings.Contains(s, "broken invariant") {
				panicked = true
				return
			}
			panic(r)
		}
	}()
	f()
	return false
}

func TestWordStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Start near the wrap-arounds of both counters.
		g0 := rapid.SampledFrom([]uint32{1, 2, 1<<32 - 2, 1<<32 - 1}).Draw(t, "gen0")
		e0 := rapid.SampledFrom([]uint32{0, 1, epochMask - 1, epochMask}).Draw(t, "epoch0")
		var w Word
		w.v.Store(Pack(g0, e0, Vacant))
		m := &model{gen: g0, epoch: e0, st: Vacant}
		check := func(op string) {
			if got := w.Load(); got != m.word() {
				g, e, s := Unpack(got)
				t.Fatalf("after %s: word gen=%d epoch=%d %v, model gen=%d epoch=%d %v", op, g, e, s, m.gen, m.epoch, m.st)
			}
		}
		ops := map[string]func(*rapid.T){
			"Install": func(t *rapid.T) {
				if m.st != Vacant {
					if !mustPanic(func() { w.Install() }) {
						t.Fatalf("Install from %v did not panic", m.st)
					}
					return
				}
				if g := w.Install(); g != m.gen {
					t.Fatalf("Install gen %d want %d", g, m.gen)
				}
				m.epoch, m.st = 0, Queued
			},
			"InstallParked": func(t *rapid.T) {
				if m.st != Vacant {
					if !mustPanic(func() { w.InstallParked() }) {
						t.Fatalf("InstallParked from %v did not panic", m.st)
					}
					return
				}
				if g := w.InstallParked(); g != m.gen {
					t.Fatalf("InstallParked gen %d want %d", g, m.gen)
				}
				m.epoch, m.st = 0, Parked
			},
			"Pop": func(t *rapid.T) {
				gen := m.gen
				if rapid.Bool().Draw(t, "stale") {
					gen--
				}
				ok := w.Pop(gen)
				want := gen == m.gen && m.st == Queued
				if ok != want {
					t.Fatalf("Pop(%d) = %v in %v", gen, ok, m.st)
				}
				if ok {
					m.st = Running
				}
			},
			"Yield": func(t *rapid.T) {
				if m.st != Running && m.st != Notified {
					if !mustPanic(func() { w.Yield(m.gen) }) {
						t.Fatalf("Yield from %v did not panic", m.st)
					}
					return
				}
				w.Yield(m.gen)
				m.st = Queued
			},
			"ParkIdle": func(t *rapid.T) {
				if m.st != Running && m.st != Notified {
					if !mustPanic(func() { w.ParkIdle(m.gen) }) {
						t.Fatalf("ParkIdle from %v did not panic", m.st)
					}
					return
				}
				parked := w.ParkIdle(m.gen)
				if parked != (m.st == Running) {
					t.Fatalf("ParkIdle from %v returned %v", m.st, parked)
				}
				if parked {
					m.st = Parked
				} else {
					m.st = Queued
				}
			},
			"ParkWait": func(t *rapid.T) {
				acc := rapid.Bool().Draw(t, "acceptMessages")
				if m.st != Running && m.st != Notified {
					if !mustPanic(func() { w.ParkWait(m.gen, acc) }) {
						t.Fatalf("ParkWait from %v did not panic", m.st)
					}
					return
				}
				parked := w.ParkWait(m.gen, acc)
				if parked != (m.st == Running) {
					t.Fatalf("ParkWait from %v returned %v", m.st, parked)
				}
				switch {
				case !parked:
					m.st = Running
				case acc:
					m.st = Parked
				default:
					m.st = Blocked
				}
			},
			"BeginWait": func(t *rapid.T) {
				if m.st != Running && m.st != Notified {
					if !mustPanic(func() { w.BeginWait(m.gen) }) {
						t.Fatalf("BeginWait from %v did not panic", m.st)
					}
					return
				}
				e := w.BeginWait(m.gen)
				m.epoch = (m.epoch + 1) & epochMask
				m.st = Running
				if e != m.epoch {
					t.Fatalf("BeginWait epoch %d want %d", e, m.epoch)
				}
			},
			"Wake": func(t *rapid.T) {
				gen, epoch := m.gen, m.epoch
				if rapid.Bool().Draw(t, "staleGen") {
					gen++
				}
				if rapid.Bool().Draw(t, "staleEpoch") {
					epoch = (epoch - 1) & epochMask
				}
				r := w.Wake(gen, epoch)
				want := Noop
				if gen == m.gen && epoch == m.epoch {
					switch m.st {
					case Parked, Blocked:
						want, m.st = Enqueue, Queued
					case Running:
						want, m.st = Noted, Notified
					}
				}
				if r != want {
					t.Fatalf("Wake = %v want %v", r, want)
				}
			},
			"WakeAny": func(t *rapid.T) {
				r := w.WakeAny(m.gen)
				want := Noop
				switch m.st {
				case Parked, Blocked:
					want, m.st = Enqueue, Queued
				case Running:
					want, m.st = Noted, Notified
				}
				if r != want {
					t.Fatalf("WakeAny = %v want %v", r, want)
				}
			},
			"WakeMsg": func(t *rapid.T) {
				gen := m.gen
				if rapid.Bool().Draw(t, "stale") {
					gen--
				}
				r := w.WakeMsg(gen)
				want := Noop
				if gen == m.gen && m.st == Parked {
					want, m.st = Enqueue, Queued
				}
				if r != want {
					t.Fatalf("WakeMsg = %v want %v", r, want)
				}
			},
			"Finish": func(t *rapid.T) {
				if m.st != Running && m.st != Notified {
					if !mustPanic(func() { w.Finish(m.gen) }) {
						t.Fatalf("Finish from %v did not panic", m.st)
					}
					return
				}
				w.Finish(m.gen)
				m.st = Done
			},
			"Reclaim": func(t *rapid.T) {
				if m.st != Done {
					if !mustPanic(func() { w.Reclaim(m.gen) }) {
						t.Fatalf("Reclaim from %v did not panic", m.st)
					}
					return
				}
				old := m.gen
				ng := w.Reclaim(m.gen)
				m.gen, m.epoch, m.st = NextGen(m.gen), 0, Vacant
				if ng != m.gen || ng == 0 || ng == old {
					t.Fatalf("Reclaim gen %d -> %d", old, ng)
				}
				// Every operation with the old generation is now inert.
				if w.Pop(old) || w.WakeMsg(old) != Noop || w.WakeAny(old) != Noop || w.Wake(old, 0) != Noop {
					t.Fatalf("stale generation %d acted on the reclaimed slot", old)
				}
			},
		}
		names := make([]string, 0, len(ops))
		for k := range ops {
			names = append(names, k)
		}
		for i := rapid.IntRange(1, 200).Draw(t, "steps"); i > 0; i-- {
			op := rapid.SampledFrom(sortStrings(names)).Draw(t, "op")
			ops[op](t)
			check(op)
		}
	})
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func TestNextGenSkipsZero(t *testing.T) {
	if NextGen(1<<32-1) != 1 {
		t.Fatal("generation wrap must skip 0")
	}
}

func TestSlabFullAndReuse(t *testing.T) {
	sl := NewSlab[int](ChunkSize + 1)
	var idxs []uint32
	for {
		i, s, ok := sl.Alloc(0)
		if !ok {
			break
		}
		if s == nil || sl.At(i) != s {
			t.Fatal("Alloc returned a slot At does not find")
		}
		idxs = append(idxs, i)
	}
	if len(idxs) != sl.Cap() {
		t.Fatalf("allocated %d of %d", len(idxs), sl.Cap())
	}
	sl.Free(idxs[7], 0)
	if i, _, ok := sl.Alloc(0); !ok || i != idxs[7] {
		t.Fatalf("freed slot not reused: %d %v", i, ok)
	}
	if sl.At(uint32(sl.Cap()+ChunkSize)) != nil {
		t.Fatal("At out of range must be nil")
	}
}

// TestSlabShardsModel: random Allocs and Frees over several shards against a
// set: an index is never handed out twice while held, Alloc fails exactly
// when every index is held, and freed indices come back.
func TestSlabShardsModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		capacity := rapid.IntRange(1, 2*ChunkSize+3).Draw(t, "cap")
		nsh := rapid.IntRange(1, 5).Draw(t, "shards")
		sl := NewSlabShards[int](capacity, nsh)
		capacity = sl.Cap()
		held := map[uint32]bool{}
		var order []uint32
		for range rapid.IntRange(0, 400).Draw(t, "steps") {
			hint := rapid.IntRange(0, nsh-1).Draw(t, "hint")
			if len(order) > 0 && rapid.Bool().Draw(t, "free") {
				k := rapid.IntRange(0, len(order)-1).Draw(t, "which")
				idx := order[k]
				order = append(order[:k], order[k+1:]...)
				delete(held, idx)
				sl.Free(idx, hint)
				continue
			}
			idx, s, ok := sl.Alloc(hint)
			if !ok {
				if len(held) != capacity {
					t.Fatalf("Alloc failed with %d of %d held", len(held), capacity)
				}
				continue
			}
			if held[idx] || s != sl.At(idx) || int(idx) >= capacity {
				t.Fatalf("bad Alloc: idx %d held %v", idx, held[idx])
			}
			held[idx] = true
			order = append(order, idx)
			if sl.Live() != len(held) {
				t.Fatalf("Live %d, model %d", sl.Live(), len(held))
			}
		}
	})
}

// TestSlabShardsConcurrent: goroutines on different shards allocate and
// free at once; an owner table catches any index handed out twice.
func TestSlabShardsConcurrent(t *testing.T) {
	const workers, rounds = 4, 20000
	sl := NewSlabShards[int](300, workers)
	owner := make([]atomic.Int32, sl.Cap())
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []uint32
			for i := range rounds {
				if len(mine) > 0 && (i%3 == 0 || len(mine) > 100) {
					idx := mine[len(mine)-1]
					mine = mine[:len(mine)-1]
					if !owner[idx].CompareAndSwap(int32(g+1), 0) {
						t.Errorf("index %d freed by a non-owner", idx)
						return
					}
					sl.Free(idx, g)
					continue
				}
				idx, _, ok := sl.Alloc(g)
				if !ok {
					continue
				}
				if !owner[idx].CompareAndSwap(0, int32(g+1)) {
					t.Errorf("index %d handed out twice", idx)
					return
				}
				mine = append(mine, idx)
			}
			for _, idx := range mine {
				owner[idx].Store(0)
				sl.Free(idx, g)
			}
		}()
	}
	wg.Wait()
	if sl.Live() != 0 {
		t.Fatalf("Live = %d after every index was freed", sl.Live())
	}
}

// TestSlabReusesBeforeGrowing: one shard only allocates, another only frees
// (a scheduler running actors spawned from outside): the allocating shard
// takes the freed indices back rather than growing the slab to capacity.
func TestSlabReusesBeforeGrowing(t *testing.T) {
	sl := NewSlabShards[int](1<<20, 2)
	var held []uint32
	for range 200000 {
		idx, _, ok := sl.Alloc(1)
		if !ok {
			t.Fatal("slab full")
		}
		held = append(held, idx)
		if len(held) > 100 {
			sl.Free(held[0], 0)
			held = held[1:]
		}
	}
	if sl.next > 4*ChunkSize {
		t.Fatalf("the slab grew to %d indices for at most 101 live", sl.next)
	}
}
