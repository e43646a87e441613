package monitor

import (
	"cmp"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// nodeModel is the reference: three plain maps and a flag.
type nodeModel struct {
	closed   bool
	links    map[int]bool
	monitors map[uint64]int
	watching map[uint64]int
}

// TestNodeModel drives a Node and a model with the same random operations.
// Pids and refs range over more than SmallMax values so both representations
// of the sets, and the moves between them, are exercised.
func TestNodeModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var n Node[int] // the zero Node is ready
		m := nodeModel{links: map[int]bool{}, monitors: map[uint64]int{}, watching: map[uint64]int{}}
		pids := rapid.IntRange(1, 2*SmallMax+2)
		refs := rapid.Uint64Range(1, 2*SmallMax+2)

		t.Repeat(map[string]func(*rapid.T){
			"AddLink": func(t *rapid.T) {
				p := pids.Draw(t, "peer")
				if got := n.AddLink(p); got != !m.closed {
					t.Fatalf("AddLink(%d) = %v, closed=%v", p, got, m.closed)
				}
				if !m.closed {
					m.links[p] = true
				}
			},
			"AddLinks": func(t *rapid.T) { // a burst, to cross SmallMax often
				for _, p := range rapid.SliceOfN(pids, 1, SmallMax).Draw(t, "peers") {
					if got := n.AddLink(p); got != !m.closed {
						t.Fatalf("AddLink(%d) = %v, closed=%v", p, got, m.closed)
					}
					if !m.closed {
						m.links[p] = true
					}
				}
			},
			"RemoveLink": func(t *rapid.T) {
				p := pids.Draw(t, "peer")
				if got := n.RemoveLink(p); got != m.links[p] {
					t.Fatalf("RemoveLink(%d) = %v, want %v", p, got, m.links[p])
				}
				delete(m.links, p)
			},
			"AddMonitor": func(t *rapid.T) {
				ref, p := refs.Draw(t, "ref"), pids.Draw(t, "watcher")
				if _, dup := m.monitors[ref]; dup && !m.closed {
					t.Skip("a duplicate ref is misuse; TestNodeMisuse covers it")
				}
				if got := n.AddMonitor(ref, p); got != !m.closed {
					t.Fatalf("AddMonitor(%d, %d) = %v, closed=%v", ref, p, got, m.closed)
				}
				if !m.closed {
					m.monitors[ref] = p
				}
			},
			"RemoveMonitor": func(t *rapid.T) {
				ref := refs.Draw(t, "ref")
				_, want := m.monitors[ref]
				if got := n.RemoveMonitor(ref); got != want {
					t.Fatalf("RemoveMonitor(%d) = %v, want %v", ref, got, want)
				}
				delete(m.monitors, ref)
			},
			"AddWatching": func(t *rapid.T) {
				ref, p := refs.Draw(t, "ref"), pids.Draw(t, "target")
				if _, dup := m.watching[ref]; dup && !m.closed {
					t.Skip("a duplicate ref is misuse; TestNodeMisuse covers it")
				}
				if got := n.AddWatching(ref, p); got != !m.closed {
					t.Fatalf("AddWatching(%d, %d) = %v, closed=%v", ref, p, got, m.closed)
				}
				if !m.closed {
					m.watching[ref] = p
				}
			},
			"RemoveWatching": func(t *rapid.T) {
				ref := refs.Draw(t, "ref")
				want, wok := m.watching[ref]
				if got, ok := n.RemoveWatching(ref); got != want || ok != wok {
					t.Fatalf("RemoveWatching(%d) = %d, %v; want %d, %v", ref, got, ok, want, wok)
				}
				delete(m.watching, ref)
			},
			"Close": func(t *rapid.T) {
				links, mons, watch := n.Close()
				slices.Sort(links)
				slices.SortFunc(mons, func(a, b Monitor[int]) int { return cmp.Compare(a.Ref, b.Ref) })
				slices.SortFunc(watch, func(a, b Watch[int]) int { return cmp.Compare(a.Ref, b.Ref) })
				var wantMons []Monitor[int]
				for _, ref := range slices.Sorted(maps.Keys(m.monitors)) {
					wantMons = append(wantMons, Monitor[int]{ref, m.monitors[ref]})
				}
				var wantWatch []Watch[int]
				for _, ref := range slices.Sorted(maps.Keys(m.watching)) {
					wantWatch = append(wantWatch, Watch[int]{ref, m.watching[ref]})
				}
				if wantLinks := slices.Sorted(maps.Keys(m.links)); !slices.Equal(links, wantLinks) {
					t.Fatalf("Close links = %v, want %v", links, wantLinks)
				}
				if !slices.Equal(mons, wantMons) {
					t.Fatalf("Close monitors = %v, want %v", mons, wantMons)
				}
				if !slices.Equal(watch, wantWatch) {
					t.Fatalf("Close watching = %v, want %v", watch, wantWatch)
				}
				m = nodeModel{closed: true, links: map[int]bool{}, monitors: map[uint64]int{}, watching: map[uint64]int{}}
			},
			"": func(t *rapid.T) {
				n.checkRep()
				if n.Closed() != m.closed {
					t.Fatalf("Closed() = %v, want %v", n.Closed(), m.closed)
				}
				l, mo, w := n.Sizes()
				if l != len(m.links) || mo != len(m.monitors) || w != len(m.watching) {
					t.Fatalf("sizes %d/%d/%d, model %d/%d/%d", l, mo, w, len(m.links), len(m.monitors), len(m.watching))
				}
				for p := 1; p <= 2*SmallMax+2; p++ {
					if n.HasLink(p) != m.links[p] {
						t.Fatalf("HasLink(%d) = %v, want %v", p, n.HasLink(p), m.links[p])
					}
				}
			},
		})
	})
}

func TestCloseTwice(t *testing.T) {
	var n Node[string]
	n.AddLink("a")
	n.AddMonitor(1, "b")
	n.AddWatching(2, "c")
	l, m, w := n.Close()
	if len(l) != 1 || len(m) != 1 || len(w) != 1 {
		t.Fatalf("first Close = %v %v %v", l, m, w)
	}
	if l, m, w := n.Close(); l != nil || m != nil || w != nil {
		t.Fatalf("second Close = %v %v %v, want nothing", l, m, w)
	}
	if n.AddLink("a") || n.AddMonitor(3, "b") || n.AddWatching(4, "c") {
		t.Fatal("an Add after Close succeeded")
	}
	if n.HasLink("a") {
		t.Fatal("link survived Close")
	}
}

func TestNodeMisuse(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "monitor: ") {
				t.Errorf("%s: recovered %v, want a monitor: panic", name, r)
			}
		}()
		f()
	}
	var n Node[int]
	n.AddMonitor(1, 10)
	n.AddWatching(1, 10)
	mustPanic("AddMonitor ref 0", func() { n.AddMonitor(0, 1) })
	mustPanic("AddMonitor duplicate ref", func() { n.AddMonitor(1, 11) })
	mustPanic("AddWatching ref 0", func() { n.AddWatching(0, 1) })
	mustPanic("AddWatching duplicate ref", func() { n.AddWatching(1, 11) })
}

// TestNodeSize pins the fixed size promised in the design note, for a pid of
// two words (index+generation and node), so growth is a deliberate choice.
func TestNodeSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("size checked on 64-bit platforms")
	}
	if got := unsafe.Sizeof(Node[[2]uint64]{}); got > 112 {
		t.Fatalf("Node is %d bytes, the design note promises 112", got)
	}
}

// TestNodeGrowsAndShrinks: a supervisor-sized link set moves to a map and an
// emptied set holds no memory.
func TestNodeGrowsAndShrinks(t *testing.T) {
	var n Node[int]
	const peers = 10 * SmallMax
	for p := range peers {
		n.AddLink(p)
	}
	if n.links.big == nil {
		t.Fatal("large link set did not move to a map")
	}
	for p := range peers {
		if !n.RemoveLink(p) {
			t.Fatalf("RemoveLink(%d) = false", p)
		}
	}
	if n.links.big != nil || n.links.small != nil {
		t.Fatal("emptied link set still holds memory")
	}
	n.checkRep()
}

// TestAddLinkVersusClose races AddLink (and AddMonitor) from several
// goroutines against Close: every add that reported true is returned by Close
// exactly once, and once an add reports false every later add does too.
func TestAddLinkVersusClose(t *testing.T) {
	const adders, perAdder, rounds = 4, 64, 200
	for round := range rounds {
		var n Node[int]
		var start, done sync.WaitGroup
		start.Add(1)
		added := make([][]int, adders)
		monitored := make([][]uint64, adders)
		for a := range adders {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				closedSeen := false
				for i := range perAdder {
					p := a*perAdder + i
					ok := n.AddLink(p)
					okM := n.AddMonitor(uint64(p+1), p)
					if closedSeen && (ok || okM) {
						t.Errorf("round %d: add of %d succeeded after an earlier add saw the node closed", round, p)
					}
					if ok {
						added[a] = append(added[a], p)
					}
					if okM {
						monitored[a] = append(monitored[a], uint64(p+1))
					}
					closedSeen = closedSeen || !ok || !okM
				}
			}()
		}
		var links []int
		var mons []Monitor[int]
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			for range round % 50 { // vary where Close lands among the adds
				_ = n.HasLink(0)
			}
			links, mons, _ = n.Close()
		}()
		start.Done()
		done.Wait()

		want := slices.Sorted(slices.Values(slices.Concat(added...)))
		slices.Sort(links)
		if !slices.Equal(links, want) {
			t.Fatalf("round %d: Close returned %d links %v, adds that succeeded: %d %v", round, len(links), links, len(want), want)
		}
		wantRefs := slices.Sorted(slices.Values(slices.Concat(monitored...)))
		var gotRefs []uint64
		for _, m := range mons {
			if uint64(m.Watcher+1) != m.Ref {
				t.Fatalf("round %d: monitor %v returned with the wrong watcher", round, m)
			}
			gotRefs = append(gotRefs, m.Ref)
		}
		slices.Sort(gotRefs)
		if !slices.Equal(gotRefs, wantRefs) {
			t.Fatalf("round %d: Close returned monitors %v, adds that succeeded %v", round, gotRefs, wantRefs)
		}
		if l, m, w := n.Close(); l != nil || m != nil || w != nil {
			t.Fatalf("round %d: second Close returned entries", round)
		}
	}
}

// TestLinkPairModel drives two Nodes with Link and Unlink in both
// directions, Close, and the exit signal that follows a Close (the actor
// package's finaliser removes the survivor's half, and signals it if that
// half was there), as separate steps, so that operations land between a
// Close and its signal. The model keeps each half: the pair invariant holds
// after every step, and each result is the one the model predicts.
func TestLinkPairModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var n [2]Node[int]
		var closed, hold, pending [2]bool // hold[i]: n[i] holds 1-i; pending[i]: i's signal not yet sent
		t.Repeat(map[string]func(*rapid.T){
			"Link": func(t *rapid.T) {
				i := rapid.IntRange(0, 1).Draw(t, "caller")
				j := 1 - i
				want := Linked
				switch {
				case closed[i]:
					want = SelfDead
				case hold[i]:
				case closed[j]:
					want = PeerDead
				default:
					hold[i], hold[j] = true, true
				}
				if got := Link(&n[i], i, &n[j], j); got != want {
					t.Fatalf("Link(%d, %d) = %v, want %v", i, j, got, want)
				}
			},
			"Unlink": func(t *rapid.T) {
				i := rapid.IntRange(0, 1).Draw(t, "caller")
				j := 1 - i
				want := !closed[i] && hold[i]
				if got := Unlink(&n[i], i, &n[j], j); got != want {
					t.Fatalf("Unlink(%d, %d) = %v, want %v", i, j, got, want)
				}
				if !closed[i] { // a dead caller leaves the peer's half to its signal
					hold[i], hold[j] = false, false
				}
			},
			"Close": func(t *rapid.T) {
				i := rapid.IntRange(0, 1).Draw(t, "dying")
				links, _, _ := n[i].Close()
				if got, want := len(links) == 1, hold[i]; got != want {
					t.Fatalf("Close(%d) returned %v, model holds %v", i, links, want)
				}
				pending[i] = pending[i] || hold[i]
				closed[i], hold[i] = true, false
			},
			"Signal": func(t *rapid.T) {
				i := rapid.IntRange(0, 1).Draw(t, "dead")
				if !pending[i] {
					t.Skip("no signal pending")
				}
				j := 1 - i
				if got := n[j].RemoveLink(i); got != hold[j] {
					t.Fatalf("signal of %d: survivor's RemoveLink = %v, model holds %v", i, got, hold[j])
				}
				pending[i], hold[j] = false, false
			},
			"": func(t *rapid.T) {
				if !closed[0] && !closed[1] && hold[0] != hold[1] {
					t.Fatalf("model broke the pair invariant: %v", hold)
				}
				for i := range n {
					if got := n[i].HasLink(1 - i); got != hold[i] {
						t.Fatalf("node %d holds its half: %v, model: %v", i, got, hold[i])
					}
				}
			},
		})
	})
}

// TestUnlinkByDeadOwner: a dead owner cannot unlink. Between the owner's
// Close and its finaliser's removal of the peer's half, an Unlink by the
// owner (an orphaned handler) must leave the peer's half for the finaliser,
// whose exit signal it decides; an Unlink by the live peer removes it, and
// the signal is dropped.
func TestUnlinkByDeadOwner(t *testing.T) {
	var a, b Node[string]
	if r := Link(&a, "a", &b, "b"); r != Linked {
		t.Fatalf("Link = %v", r)
	}
	if links, _, _ := a.Close(); len(links) != 1 {
		t.Fatalf("Close returned %v", links)
	}
	if Unlink(&a, "a", &b, "b") {
		t.Fatal("Unlink by a closed owner reported true")
	}
	if !b.HasLink("a") {
		t.Fatal("Unlink by a closed owner removed the peer's half: the exit signal is lost")
	}
	if Unlink(&b, "b", &a, "a") != true || b.HasLink("a") {
		t.Fatal("Unlink by the live peer of a closed owner did not remove its half")
	}
	if r := Link(&b, "b", &a, "a"); r != PeerDead {
		t.Fatalf("Link to a closed node = %v, want PeerDead", r)
	}
	if r := Link(&a, "a", &a, "c"); r != SelfDead { // one shared closed node: locked once
		t.Fatalf("Link on one closed node = %v, want SelfDead", r)
	}
}

// TestLinkVersusUnlink races Link(a, b) against Unlink(b, a), which take the
// pair's locks from opposite ends, over many fresh pairs (half of them linked
// to begin with): no deadlock, and each pair ends with both halves or
// neither. The two goroutines meet at a spin barrier before each pair, so
// that the calls overlap as often as the machine allows.
func TestLinkVersusUnlink(t *testing.T) {
	const rounds = 20000
	type pair struct{ a, b Node[int] }
	pairs := make([]pair, rounds)
	for r := range pairs {
		if r%2 == 1 {
			Link(&pairs[r].a, 0, &pairs[r].b, 1)
		}
	}
	var arrived atomic.Int64
	var done sync.WaitGroup
	run := func(op func(*pair)) {
		defer done.Done()
		for r := range pairs {
			arrived.Add(1)
			for arrived.Load() < 2*int64(r+1) {
				runtime.Gosched()
			}
			op(&pairs[r])
		}
	}
	done.Add(2)
	go run(func(p *pair) { Link(&p.a, 0, &p.b, 1) })
	go run(func(p *pair) { Unlink(&p.b, 1, &p.a, 0) })
	done.Wait()
	bad := 0
	for r := range pairs {
		if pairs[r].a.HasLink(1) != pairs[r].b.HasLink(0) {
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d/%d pairs hold their link on one side only", bad, rounds)
	}
}

// TestRemoveLinkThenHoldsUnlink: a death's signal (RemoveLinkThen's signal)
// runs before an Unlink of the pair by the survivor can return, so an
// Unlink that finds the link gone never returns ahead of the signal.
func TestRemoveLinkThenHoldsUnlink(t *testing.T) {
	var dead, survivor Node[int]
	if Link(&survivor, 1, &dead, 2) != Linked {
		t.Fatal("link failed")
	}
	dead.Close()
	var signalled atomic.Bool
	unlinked := make(chan bool)
	took := survivor.RemoveLinkThen(2, func() {
		go func() { unlinked <- Unlink(&survivor, 1, &dead, 2) }()
		runtime.Gosched()
		for range 1000 {
			runtime.Gosched() // give the Unlink every chance to run ahead
		}
		signalled.Store(true)
	})
	if !took {
		t.Fatal("RemoveLinkThen found no link")
	}
	if held := <-unlinked; held || !signalled.Load() {
		t.Fatalf("Unlink returned %v with the signal done %v; want false after the signal", held, signalled.Load())
	}
	if survivor.RemoveLinkThen(2, func() { t.Error("signal for a link already taken") }) {
		t.Error("RemoveLinkThen took a link twice")
	}
}
