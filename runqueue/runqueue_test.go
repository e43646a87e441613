package runqueue

import (
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// TestQueuesModel: one owner pushes and pops a Local (spilling to Global),
// and thieves steal, all sequentially driven by rapid against a multiset
// model: every pid pushed comes out exactly once. The model is driven from
// one goroutine, so -race finds nothing here that a plain run does not:
// under -race it runs up to 500 steps a case, not 2000.
func TestQueuesModel(t *testing.T) {
	maxSteps := 2000
	if raceBuild {
		maxSteps = 500
	}
	rapid.Check(t, func(t *rapid.T) {
		var g Global
		var own, thief Local
		var next Next
		in := map[uint64]bool{}
		out := map[uint64]bool{}
		seq := uint64(1)
		take3 := func(v uint64, ok bool, where string) {
			if !ok {
				return
			}
			if !in[v] {
				t.Fatalf("%s returned %d which was never pushed", where, v)
			}
			if out[v] {
				t.Fatalf("%s returned %d twice", where, v)
			}
			out[v] = true
		}
		for i := rapid.IntRange(0, maxSteps).Draw(t, "steps"); i > 0; i-- {
			switch rapid.IntRange(0, 6).Draw(t, "op") {
			case 0, 1:
				n := rapid.IntRange(1, 300).Draw(t, "n")
				for j := 0; j < n; j++ {
					in[seq] = true
					own.Push(seq, &g)
					seq++
				}
			case 2:
				v, ok := own.Pop()
				take3(v, ok, "pop")
			case 3:
				v, ok := thief.StealInto(&own)
				take3(v, ok, "steal")
			case 4:
				v, ok := g.PopBatch(&thief, 2)
				take3(v, ok, "global batch")
			case 5:
				in[seq] = true
				d := next.Set(seq)
				seq++
				if d != 0 {
					own.Push(d, &g)
				}
			case 6:
				v := next.Take()
				take3(v, v != 0, "runnext")
			}
			if own.Len() > LocalSize || thief.Len() > LocalSize {
				t.Fatal("ring over capacity")
			}
		}
		// Drain everything; every pushed pid must come out exactly once.
		if v := next.Take(); v != 0 {
			take3(v, true, "runnext")
		}
		own.Drain(func(v uint64) { take3(v, true, "own") })
		thief.Drain(func(v uint64) { take3(v, true, "thief") })
		for {
			v, ok := g.Pop()
			if !ok {
				break
			}
			take3(v, true, "global")
		}
		if len(out) != len(in) {
			t.Fatalf("pushed %d, popped %d", len(in), len(out))
		}
	})
}

// TestConcurrentSteal: the owner pushes and pops while thieves steal; each
// pid is taken exactly once.
func TestConcurrentSteal(t *testing.T) {
	var g Global
	var own Local
	const N = 200000
	var mu sync.Mutex
	seen := make([]bool, N+1)
	mark := func(v uint64) {
		mu.Lock()
		defer mu.Unlock()
		if seen[v] {
			t.Errorf("pid %d taken twice", v)
		}
		seen[v] = true
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for th := 0; th < 3; th++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine Local
			for {
				select {
				case <-stop:
					mine.Drain(mark)
					return
				default:
				}
				if v, ok := mine.StealInto(&own); ok {
					mark(v)
				}
				if v, ok := mine.Pop(); ok {
					mark(v)
				}
			}
		}()
	}
	for i := uint64(1); i <= N; i++ {
		own.Push(i, &g)
		if i%3 == 0 {
			if v, ok := own.Pop(); ok {
				mark(v)
			}
		}
	}
	own.Drain(mark)
	close(stop)
	wg.Wait()
	for {
		v, ok := g.Pop()
		if !ok {
			break
		}
		mark(v)
	}
	for i := 1; i <= N; i++ {
		if !seen[i] {
			t.Fatalf("pid %d lost", i)
		}
	}
}
