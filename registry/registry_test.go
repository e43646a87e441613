package registry

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"
)

// TestRegistryModel drives a Registry and a plain map model with the same
// random operations and checks that they agree after every step, in both
// directions: one name one pid, one pid one name, names vanish at Remove.
func TestRegistryModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := New[int]()
		model := map[string]int{} // name -> pid
		nameOf := func(p int) (string, bool) {
			for n, q := range model {
				if q == p {
					return n, true
				}
			}
			return "", false
		}
		names := rapid.SampledFrom([]string{"", "a", "b", "c", "d"})
		pids := rapid.IntRange(1, 5)

		t.Repeat(map[string]func(*rapid.T){
			"Register": func(t *rapid.T) {
				n, p := names.Draw(t, "name"), pids.Draw(t, "pid")
				var want error
				if _, held := model[n]; n == "" {
					want = ErrEmptyName
				} else if held {
					want = ErrNameTaken
				} else if _, named := nameOf(p); named {
					want = ErrAlreadyNamed
				}
				err := r.Register(n, p)
				if want == nil {
					if err != nil {
						t.Fatalf("Register(%q, %d) = %v, want nil", n, p, err)
					}
					model[n] = p
				} else if !errors.Is(err, want) {
					t.Fatalf("Register(%q, %d) = %v, want %v", n, p, err, want)
				}
			},
			"Unregister": func(t *rapid.T) {
				n := names.Draw(t, "name")
				err := r.Unregister(n)
				if _, held := model[n]; held {
					if err != nil {
						t.Fatalf("Unregister(%q) = %v, want nil", n, err)
					}
					delete(model, n)
				} else {
					want := ErrNotRegistered
					if n == "" {
						want = ErrEmptyName // as Register
					}
					if !errors.Is(err, want) {
						t.Fatalf("Unregister(%q) = %v, want %v", n, err, want)
					}
				}
			},
			"Remove": func(t *rapid.T) {
				p := pids.Draw(t, "pid")
				r.Remove(p)
				if n, named := nameOf(p); named {
					delete(model, n)
				}
			},
			"": func(t *rapid.T) {
				if r.Len() != len(model) {
					t.Fatalf("Len() = %d, model has %d", r.Len(), len(model))
				}
				if got, want := r.Names(), slices.Sorted(maps.Keys(model)); !slices.Equal(got, want) {
					t.Fatalf("Names() = %q, want %q", got, want)
				}
				for _, n := range []string{"", "a", "b", "c", "d"} {
					p, ok := r.Whereis(n)
					wp, wok := model[n]
					if p != wp || ok != wok {
						t.Fatalf("Whereis(%q) = %d, %v; want %d, %v", n, p, ok, wp, wok)
					}
				}
				for p := 1; p <= 5; p++ {
					n, ok := r.NameOf(p)
					wn, wok := nameOf(p)
					if n != wn || ok != wok {
						t.Fatalf("NameOf(%d) = %q, %v; want %q, %v", p, n, ok, wn, wok)
					}
				}
			},
		})
	})
}

// TestRegisterOneNameRace: of N goroutines registering one name at once,
// exactly one wins and Whereis names the winner.
func TestRegisterOneNameRace(t *testing.T) {
	const goroutines, rounds = 16, 200
	for round := range rounds {
		r := New[int]()
		var start, done sync.WaitGroup
		start.Add(1)
		var wins atomic.Int32
		var winner atomic.Int64
		errs := make([]error, goroutines)
		for i := range goroutines {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				if errs[i] = r.Register("svc", i+1); errs[i] == nil {
					wins.Add(1)
					winner.Store(int64(i + 1))
				}
			}()
		}
		start.Done()
		done.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d winners, want exactly 1", round, wins.Load())
		}
		for i, err := range errs {
			if err != nil && !errors.Is(err, ErrNameTaken) {
				t.Fatalf("round %d: loser %d got %v, want ErrNameTaken", round, i+1, err)
			}
		}
		if p, ok := r.Whereis("svc"); !ok || int64(p) != winner.Load() {
			t.Fatalf("round %d: Whereis = %d, %v; winner was %d", round, p, ok, winner.Load())
		}
		if r.Len() != 1 {
			t.Fatalf("round %d: Len = %d", round, r.Len())
		}
	}
}

// TestRegisterOnePidRace: N goroutines give one pid N different names at
// once; exactly one name sticks, the rest fail with ErrAlreadyNamed.
func TestRegisterOnePidRace(t *testing.T) {
	const goroutines, rounds = 16, 200
	for round := range rounds {
		r := New[int]()
		var start, done sync.WaitGroup
		start.Add(1)
		var wins atomic.Int32
		for i := range goroutines {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				err := r.Register(fmt.Sprint("n", i), 7)
				switch {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, ErrAlreadyNamed):
					t.Errorf("Register: %v, want ErrAlreadyNamed", err)
				}
			}()
		}
		start.Done()
		done.Wait()
		if wins.Load() != 1 || r.Len() != 1 {
			t.Fatalf("round %d: %d winners, Len %d; want 1, 1", round, wins.Load(), r.Len())
		}
		name, _ := r.NameOf(7)
		if p, ok := r.Whereis(name); !ok || p != 7 {
			t.Fatalf("round %d: NameOf(7) = %q but Whereis(%q) = %d, %v", round, name, name, p, ok)
		}
	}
}

// TestWhereisDuringChurn: readers racing writers never see a name bound to a
// pid that was never registered under it, and after the churn both directions
// agree. Pid k*names+i is only ever registered under name i.
func TestWhereisDuringChurn(t *testing.T) {
	const names, writers, readers, iters = 8, 2, 4, 2000
	r := New[int]()
	var stop atomic.Bool
	var wg, rg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range iters {
				i := (k + w) % names
				p := (k*writers+w)*names + i
				if r.Register(fmt.Sprint(i), p) == nil && k%3 == 0 {
					r.Remove(p)
				} else if k%5 == 0 {
					_ = r.Unregister(fmt.Sprint(i))
				}
			}
		}()
	}
	for range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for !stop.Load() {
				for i := range names {
					if p, ok := r.Whereis(fmt.Sprint(i)); ok && p%names != i {
						t.Errorf("Whereis(%d) = %d, never registered under that name", i, p)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	rg.Wait()
	for _, n := range r.Names() {
		p, ok := r.Whereis(n)
		if !ok {
			t.Fatalf("Names lists %q but Whereis misses it", n)
		}
		if back, _ := r.NameOf(p); back != n {
			t.Fatalf("Whereis(%q) = %d but NameOf(%d) = %q", n, p, p, back)
		}
	}
}
