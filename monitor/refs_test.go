package monitor

import (
	"math"
	"sync"
	"testing"
)

func TestRefsIncreaseNeverZero(t *testing.T) {
	var r Refs
	prev := uint64(0)
	for range 1000 {
		ref := r.Next()
		if ref == 0 || ref <= prev {
			t.Fatalf("Next = %d after %d", ref, prev)
		}
		prev = ref
	}
}

// TestRefsWrap starts the counter at the top of its range: Next skips 0.
func TestRefsWrap(t *testing.T) {
	var r Refs
	r.SetLast(math.MaxUint64 - 2)
	for _, want := range []uint64{math.MaxUint64 - 1, math.MaxUint64, 1, 2} {
		if got := r.Next(); got != want {
			t.Fatalf("Next = %d, want %d", got, want)
		}
	}
}

// TestRefsConcurrentUnique: refs from racing goroutines are all distinct and
// each goroutine sees its own refs increase.
func TestRefsConcurrentUnique(t *testing.T) {
	const goroutines, each = 4, 5000
	var r Refs
	got := make([][]uint64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				got[g] = append(got[g], r.Next())
			}
		}()
	}
	wg.Wait()
	seen := make(map[uint64]bool, goroutines*each)
	for g, refs := range got {
		for i, ref := range refs {
			if ref == 0 || seen[ref] || (i > 0 && ref <= refs[i-1]) {
				t.Fatalf("goroutine %d ref %d: %d (duplicate, zero or not increasing)", g, i, ref)
			}
			seen[ref] = true
		}
	}
	if a, b := NextRef(), NextRef(); a == 0 || b <= a {
		t.Fatalf("NextRef: %d then %d", a, b)
	}
}
