package registry

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// TestGroupsModel checks Groups against a model of plain slices in join order.
func TestGroupsModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var g Groups[int] // the zero value is ready
		model := map[string][]int{}
		groups := rapid.SampledFrom([]string{"x", "y", "z"})
		pids := rapid.IntRange(1, 4)

		t.Repeat(map[string]func(*rapid.T){
			"Join": func(t *rapid.T) {
				grp, p := groups.Draw(t, "group"), pids.Draw(t, "pid")
				g.Join(grp, p)
				model[grp] = append(model[grp], p)
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
					return
				}
				if err != nil {
					t.Fatalf("Leave(%q, %d) = %v, want nil", grp, p, err)
				}
				model[grp] = slices.Delete(list, j, j+1)
				if len(model[grp]) == 0 {
					delete(model, grp)
				}
			},
			"RemoveAll": func(t *rapid.T) {
				p := pids.Draw(t, "pid")
				g.RemoveAll(p)
				for grp, list := range model {
					if list = slices.DeleteFunc(list, func(q int) bool { return q == p }); len(list) == 0 {
						delete(model, grp)
					} else {
						model[grp] = list
					}
				}
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
