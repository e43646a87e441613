package registry

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// TestGroupsModel checks Groups against a model of plain slices in join order,
// with monitors: each monitor rebuilds its group from Monitor's snapshot and
// the changes Notify tells it, and must always hold what Members lists (as a
// multiset: a change says who, not where), told with no gap in Seq; each
// change tells every monitor of the group exactly one Change per entry, and
// others nothing.
func TestGroupsModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type mon struct {
			watcher int
			group   string
			seq     uint64
			view    map[int]int // pid -> entries, rebuilt from the snapshot and the changes
		}
		var told []Change[int] // the changes Notify told during the current step
		var g Groups[int]      // the zero value is ready
		g.Notify = func(c Change[int]) { told = append(told, c) }
		model := map[string][]int{}
		mons := map[uint64]*mon{}
		var nextRef uint64
		groups := rapid.SampledFrom([]string{"x", "y", "z"})
		pids := rapid.IntRange(1, 4)

		// expect checks that the step told each monitor of grp n changes of
		// pid p (joined or left) and nothing else, and applies them.
		type want struct {
			group  string
			p      int
			joined bool
			n      int
		}
		expect := func(t *rapid.T, ws ...want) {
			defer func() { told = nil }()
			left := map[uint64]map[want]int{}
			for _, w := range ws {
				for ref, m := range mons {
					if m.group == w.group && w.n > 0 {
						if left[ref] == nil {
							left[ref] = map[want]int{}
						}
						left[ref][want{w.group, w.p, w.joined, 0}] += w.n
					}
				}
			}
			for _, c := range told {
				m := mons[c.Ref]
				if m == nil {
					t.Fatalf("a change told to a monitor not in force: %+v", c)
				}
				if c.Watcher != m.watcher || c.Group != m.group || len(c.Pids) != 1 {
					t.Fatalf("change %+v to the monitor of %d on %q", c, m.watcher, m.group)
				}
				if c.Seq != m.seq+1 {
					t.Fatalf("monitor %d told Seq %d after %d", c.Ref, c.Seq, m.seq)
				}
				m.seq = c.Seq
				k := want{c.Group, c.Pids[0], c.Joined, 0}
				if left[c.Ref][k] == 0 {
					t.Fatalf("unexpected change %+v", c)
				}
				left[c.Ref][k]--
				if c.Joined {
					m.view[c.Pids[0]]++
				} else {
					m.view[c.Pids[0]]--
				}
			}
			for ref, l := range left {
				for k, n := range l {
					if n != 0 {
						t.Fatalf("monitor %d missed %d changes %+v", ref, n, k)
					}
				}
			}
		}

		t.Repeat(map[string]func(*rapid.T){
			"Join": func(t *rapid.T) {
				grp, p := groups.Draw(t, "group"), pids.Draw(t, "pid")
				g.Join(grp, p)
				model[grp] = append(model[grp], p)
				expect(t, want{grp, p, true, 1})
			},
			"Leave": func(t *rapid.T) {
				grp, p := groups.Draw(t, "group"), pids.Draw(t, "pid")
				err := g.Leave(grp, p)
				list := model[grp]
				j := len(list) - 1 // the most recent entry of p goes
				for j >= 0 && list[j] != p {
					j--
				}
				if j < 0 {
					if !errors.Is(err, ErrNotJoined) {
						t.Fatalf("Leave(%q, %d) = %v, want ErrNotJoined", grp, p, err)
					}
					expect(t)
					return
				}
				if err != nil {
					t.Fatalf("Leave(%q, %d) = %v, want nil", grp, p, err)
				}
				model[grp] = slices.Delete(list, j, j+1)
				if len(model[grp]) == 0 {
					delete(model, grp)
				}
				expect(t, want{grp, p, false, 1})
			},
			"RemoveAll": func(t *rapid.T) {
				p := pids.Draw(t, "pid")
				g.RemoveAll(p)
				for ref, m := range mons { // p's monitors go first: it is told nothing
					if m.watcher == p {
						delete(mons, ref)
					}
				}
				var ws []want
				for grp, list := range model {
					n := len(list)
					if list = slices.DeleteFunc(list, func(q int) bool { return q == p }); len(list) == 0 {
						delete(model, grp)
					} else {
						model[grp] = list
					}
					ws = append(ws, want{grp, p, false, n - len(list)})
				}
				expect(t, ws...)
			},
			"Monitor": func(t *rapid.T) {
				grp, w := groups.Draw(t, "group"), pids.Draw(t, "watcher")
				nextRef++
				snap := g.Monitor(grp, nextRef, w)
				if !slices.Equal(snap, model[grp]) {
					t.Fatalf("Monitor(%q) snapshot %v, want %v", grp, snap, model[grp])
				}
				m := &mon{watcher: w, group: grp, view: map[int]int{}}
				for _, p := range snap {
					m.view[p]++
				}
				mons[nextRef] = m
				expect(t)
			},
			"Demonitor": func(t *rapid.T) {
				ref := rapid.Uint64Range(0, nextRef+1).Draw(t, "ref")
				w := pids.Draw(t, "watcher")
				n, ok := g.Demonitor(ref, w)
				m := mons[ref]
				if want := m != nil && m.watcher == w; ok != want {
					t.Fatalf("Demonitor(%d, %d) = %v, want %v", ref, w, ok, want)
				}
				if ok {
					if n != m.seq {
						t.Fatalf("Demonitor(%d) says %d changes told, the monitor saw %d", ref, n, m.seq)
					}
					delete(mons, ref)
				}
				expect(t)
			},
			"": func(t *rapid.T) {
				if got, want := g.Which(), slices.Sorted(maps.Keys(model)); !slices.Equal(got, want) {
					t.Fatalf("Which() = %q, want %q", got, want)
				}
				for _, grp := range []string{"x", "y", "z"} {
					if got := g.Members(grp); !slices.Equal(got, model[grp]) {
						t.Fatalf("Members(%q) = %v, want %v", grp, got, model[grp])
					}
				}
				for ref, m := range mons {
					want := map[int]int{}
					for _, p := range model[m.group] {
						want[p]++
					}
					maps.DeleteFunc(m.view, func(_ int, n int) bool { return n == 0 })
					if !maps.Equal(m.view, want) {
						t.Fatalf("monitor %d of %q rebuilt %v, members are %v", ref, m.group, m.view, model[m.group])
					}
				}
				if got := g.MonitorCount(); got != len(mons) {
					t.Fatalf("MonitorCount() = %d, want %d", got, len(mons))
				}
				for w := 1; w <= 4; w++ {
					want := 0
					for _, m := range mons {
						if m.watcher == w {
							want++
						}
					}
					if got := g.Watching(w); got != want {
						t.Fatalf("Watching(%d) = %d, want %d", w, got, want)
					}
				}
			},
		})
	})
}

func TestMembersIsACopy(t *testing.T) {
	var g Groups[int]
	g.Join("x", 1)
	g.Join("x", 2)
	m := g.Members("x")
	m[0] = 99
	_ = append(m[:1], 98)
	if got := g.Members("x"); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("caller's writes leaked into the group: %v", got)
	}
	if g.Members("nope") != nil {
		t.Fatal("Members of an unknown group is not nil")
	}
}

// TestGroupsConcurrent: goroutines join, leave and die concurrently, each with
// its own pids; at the end the survivors' entries are exactly what each
// goroutine left behind.
func TestGroupsConcurrent(t *testing.T) {
	const workers, iters = 8, 500
	var g Groups[int]
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range iters {
				p := w*iters + k
				g.Join("all", p)
				g.Join("all", p)
				g.Join("odd", p)
				if err := g.Leave("all", p); err != nil {
					t.Errorf("Leave: %v", err)
				}
				if k%2 == 0 {
					g.RemoveAll(p) // dies
				}
				_ = g.Members("all")
			}
		}()
	}
	wg.Wait()
	all, odd := g.Members("all"), g.Members("odd")
	if len(all) != workers*iters/2 || len(odd) != workers*iters/2 {
		t.Fatalf("len(all) = %d, len(odd) = %d; want %d each", len(all), len(odd), workers*iters/2)
	}
	for _, p := range all {
		if p%iters%2 == 0 {
			t.Fatalf("dead pid %d still in a group", p)
		}
	}
}
