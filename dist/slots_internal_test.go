package dist

import (
	"net/netip"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// fakeConn records its Close.
type fakeConn struct{ closed bool }

func (c *fakeConn) Close() error { c.closed = true; return nil }

func addr(last byte) netip.Addr { return netip.AddrFrom4([4]byte{127, 0, 0, last}) }

// A silent attacker and a prompt peer from one address: the peer, once
// named, outlives every silent slot of its source; and another source's
// newcomer takes its slot from the heaviest source, not from a light one.
func TestHandshakeSlotsEvictSilentFirstFromHeaviestSource(t *testing.T) {
	g := newGate(4)
	lo, other := addr(1), addr(2)
	admit := func(src netip.Addr) (*hsSlot, *hsSlot) {
		t.Helper()
		s, v, res := g.admit(src, &fakeConn{})
		if res != admitted && res != evicting {
			t.Fatalf("admit: %v", res)
		}
		return s, v
	}
	var silent []*hsSlot
	for range 3 {
		s, _ := admit(lo)
		silent = append(silent, s)
	}
	peer, _ := admit(lo) // the table is full
	if !g.named(peer) {
		t.Fatal("named: the peer's slot was evicted")
	}
	for i := range 20 { // the attacker churns: each newcomer evicts the oldest silent slot
		s, v := admit(lo)
		if v != silent[0] {
			t.Fatalf("newcomer %d evicted %p, want the oldest silent %p (peer %p)", i, v, silent[0], peer)
		}
		if st := g.release(v); st != slotEvicted {
			t.Fatalf("release of the evicted slot: state %d", st)
		}
		silent = append(silent[1:], s)
	}
	// Another source: it takes from lo, the heaviest, the oldest silent.
	o, v := admit(other)
	if v != silent[0] {
		t.Fatalf("the other source's newcomer evicted %p, want lo's oldest silent %p", v, silent[0])
	}
	silent = silent[1:]
	g.release(v)
	// lo's newcomers now churn lo's slots alone: other's is never taken.
	for range 10 {
		s, v := admit(lo)
		if v == o || v == peer {
			t.Fatal("lo's newcomer evicted another source's slot or the named peer")
		}
		g.release(v)
		silent = append(silent[1:], s)
	}
	// With no silent slot left in lo, the oldest named one goes.
	for _, s := range silent {
		g.named(s)
	}
	if _, v := admit(lo); v != peer {
		t.Fatalf("with every slot named, the newcomer evicted %p, want the oldest, the peer %p", v, peer)
	}
	if st := g.release(peer); st != slotEvicted {
		t.Fatalf("the peer's release: state %d, want evicted", st)
	}
}

// running, table and evicted, is bounded by 2·max: past it a newcomer is
// refused, until an evicted goroutine releases its slot.
func TestHandshakeSlotsRefuseWhileEvictedUnwind(t *testing.T) {
	g := newGate(2)
	var evicted []*hsSlot
	for i := range 4 {
		_, v, res := g.admit(addr(1), &fakeConn{})
		if res == overLimit {
			t.Fatalf("admit %d refused", i)
		}
		if v != nil {
			evicted = append(evicted, v)
		}
	}
	if _, _, res := g.admit(addr(1), &fakeConn{}); res != overLimit {
		t.Fatalf("admit with 2 in the table and 2 evicted unwinding: %v, want overLimit", res)
	}
	g.release(evicted[0])
	if _, _, res := g.admit(addr(1), &fakeConn{}); res != evicting {
		t.Fatalf("admit after an evicted slot was released: %v, want evicting", res)
	}
	closers := g.close()
	if len(closers) != 2 {
		t.Fatalf("close returned %d connections, want the table's 2", len(closers))
	}
	if _, _, res := g.admit(addr(1), &fakeConn{}); res != gateShut {
		t.Fatalf("admit after close: %v", res)
	}
}

// The gate against a model of its table (accept order, states): after
// every operation the table, its per-source counts and the running count
// agree with the model, and every eviction obeys the policy (accept.go,
// "Eviction"): the victim is of a heaviest source counting the newcomer,
// the newcomer's own when it is one of them, and is that source's oldest
// silent slot, else its oldest.
func TestHandshakeSlotsAgainstModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		size := rapid.IntRange(1, 6).Draw(rt, "size")
		g := newGate(size)
		type entry struct {
			s     *hsSlot
			src   netip.Addr
			named bool
		}
		var table []entry       // the model, oldest first
		var unwinding []*hsSlot // evicted, not released
		count := func(src netip.Addr) int {
			k := 0
			for _, e := range table {
				if e.src == src {
					k++
				}
			}
			return k
		}
		rt.Repeat(map[string]func(*rapid.T){
			"admit": func(rt *rapid.T) {
				src := addr(byte(rapid.IntRange(1, 3).Draw(rt, "src")))
				s, v, res := g.admit(src, &fakeConn{})
				running := len(table) + len(unwinding)
				if running >= 2*size {
					if res != overLimit {
						rt.Fatalf("running %d of %d: %v, want overLimit", running, 2*size, res)
					}
					return
				}
				if len(table) < size {
					if res != admitted || v != nil {
						rt.Fatalf("%d of %d slots in use: %v, victim %v", len(table), size, res, v)
					}
				} else {
					if res != evicting || v == nil {
						rt.Fatalf("full table: %v, victim %v", res, v)
					}
					most := 0
					for _, e := range table {
						c := count(e.src)
						if e.src == src {
							c++
						}
						most = max(most, c)
					}
					own := count(src) > 0 && count(src)+1 == most
					heavy := func(a netip.Addr) bool {
						if own {
							return a == src
						}
						c := count(a)
						if a == src {
							c++
						}
						return c == most
					}
					// The rule's victim: among the heaviest's slots, the
					// oldest silent one, else the oldest.
					want := -1
					for j, e := range table {
						if !heavy(e.src) {
							continue
						}
						if !e.named {
							want = j
							break
						}
						if want < 0 {
							want = j
						}
					}
					i := slices.IndexFunc(table, func(e entry) bool { return e.s == v })
					if i != want {
						rt.Fatalf("newcomer of %v evicted slot %d (of %v, named %v), want %d", src, i, v.src, i >= 0 && table[i].named, want)
					}
					table = slices.Delete(table, i, i+1)
					unwinding = append(unwinding, v)
				}
				table = append(table, entry{s: s, src: src})
			},
			"name": func(rt *rapid.T) {
				if len(table) == 0 {
					rt.Skip()
				}
				i := rapid.IntRange(0, len(table)-1).Draw(rt, "i")
				if !g.named(table[i].s) {
					rt.Fatalf("named: a slot in the table is not")
				}
				table[i].named = true
			},
			"release": func(rt *rapid.T) {
				if len(table) == 0 {
					rt.Skip()
				}
				i := rapid.IntRange(0, len(table)-1).Draw(rt, "i")
				want := slotSilent
				if table[i].named {
					want = slotNamed
				}
				if st := g.release(table[i].s); st != want {
					rt.Fatalf("release: %d, want %d", st, want)
				}
				table = slices.Delete(table, i, i+1)
			},
			"unwind": func(rt *rapid.T) {
				if len(unwinding) == 0 {
					rt.Skip()
				}
				i := rapid.IntRange(0, len(unwinding)-1).Draw(rt, "i")
				if st := g.release(unwinding[i]); st != slotEvicted {
					rt.Fatalf("release of an evicted slot: %d", st)
				}
				unwinding = slices.Delete(unwinding, i, i+1)
			},
			"": func(rt *rapid.T) {
				g.mu.Lock()
				defer g.mu.Unlock()
				if g.n != len(table) || g.running != len(table)+len(unwinding) {
					rt.Fatalf("gate: %d in the table, %d running; model %d, %d", g.n, g.running, len(table), len(table)+len(unwinding))
				}
				i := 0
				for s := g.head; s != nil; s = s.next {
					if i >= len(table) || table[i].s != s {
						rt.Fatalf("table order differs at %d", i)
					}
					i++
				}
				for src, c := range g.bySrc {
					if c != count(src) || c == 0 {
						rt.Fatalf("bySrc[%v] = %d, model %d", src, c, count(src))
					}
				}
				for _, e := range table {
					if g.bySrc[e.src] == 0 {
						rt.Fatalf("bySrc lacks %v", e.src)
					}
				}
			},
		})
	})
}
