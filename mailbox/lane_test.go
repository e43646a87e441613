package mailbox

import (
	"sync"
	"testing"

	"pgregory.net/rapid"
)

type msg struct{ producer, seq int }

// TestLaneConcurrentProducers: P producers push concurrently while one
// consumer pops (recycling nodes through a Cache, as the runtime does).
// Nothing is lost, nothing duplicated, and each producer's messages arrive in
// order. With a Cache on each side, producers that only push and a
// consumer that only pops, the nodes go round through the depot, magazine
// by magazine, across goroutines: a node whose link was not reset on its
// way round, or a magazine handed over without the depot's lock ordering
// it, shows as a message out of order, a lost one, or a report from the
// race detector.
func TestLaneConcurrentProducers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		producers := rapid.IntRange(1, 6).Draw(t, "producers")
		// From a list: enough for several magazines to go round, which
		// rapid's ranges, leaning small, seldom draw.
		per := rapid.SampledFrom([]int{0, 1, 100, 2000, cacheMax, 3 * cacheMax, 5000}).Draw(t, "perProducer")
		useCache := rapid.Bool().Draw(t, "cache")
		producerCaches := rapid.Bool().Draw(t, "producerCaches")
		var l Lane
		l.Init()
		var wg sync.WaitGroup
		for p := 0; p < producers; p++ {
			wg.Add(1)
			go func(p int) {
				defer wg.Done()
				var pc *Cache
				if producerCaches {
					pc = new(Cache)
				}
				for i := 0; i < per; i++ {
					l.Push(msg{p, i}, pc)
				}
			}(p)
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		var nc *Cache
		if useCache {
			nc = new(Cache)
		}
		next := make([]int, producers)
		got := 0
		finished := false
		for got < producers*per {
			v, ok := l.Pop(nc)
			if !ok {
				if finished && l.Empty() && got < producers*per {
					// All producers are done and linked: anything missing is lost.
					t.Fatalf("lost messages: got %d of %d", got, producers*per)
				}
				select {
				case <-done:
					finished = true
				default:
				}
				continue
			}
			m := v.(msg)
			if m.seq != next[m.producer] {
				t.Fatalf("producer %d: got seq %d want %d", m.producer, m.seq, next[m.producer])
			}
			next[m.producer]++
			got++
		}
		<-done
		if _, ok := l.Pop(nc); ok {
			t.Fatal("duplicate or extra message")
		}
	})
}

// TestLaneModel drives push/pop sequentially against a slice model, with a
// cache feeding recycled nodes back into pushes.
func TestLaneModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var l Lane
		l.Init()
		var nc Cache
		var model []int
		mk := l.Tail()
		for i := rapid.IntRange(0, 300).Draw(t, "steps"); i > 0; i-- {
			if rapid.Bool().Draw(t, "push") {
				v := rapid.Int().Draw(t, "v")
				l.Push(v, &nc)
				model = append(model, v)
				if !l.ChangedSince(mk) {
					t.Fatal("ChangedSince missed a push")
				}
			} else {
				v, ok := l.Pop(&nc)
				if ok != (len(model) > 0) {
					t.Fatalf("Pop ok=%v with model len %d", ok, len(model))
				}
				if ok {
					if v != model[0] {
						t.Fatalf("Pop %v want %v", v, model[0])
					}
					model = model[1:]
				}
				mk = l.Tail()
				if len(model) == 0 && l.ChangedSince(mk) {
					t.Fatal("ChangedSince reported a push on an empty, quiet lane")
				}
			}
			if l.Empty() != (len(model) == 0) {
				t.Fatal("Empty disagrees with the model")
			}
		}
	})
}

func TestMailboxBound(t *testing.T) {
	var m Mailbox
	m.Init(3)
	for i := 0; i < 3; i++ {
		if err := m.Send(i, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Send(3, nil); err != ErrFull {
		t.Fatalf("want ErrFull, got %v", err)
	}
	m.Deliver("down", nil) // never refused
	if m.Len() != 4 {
		t.Fatalf("len %d", m.Len())
	}
	m.Signal("stop")
	if v, ok := m.PopSignal(); !ok || v != "stop" {
		t.Fatal("signal lane")
	}
	for i := 0; i < 3; i++ {
		if v, _ := m.Pop(nil); v != i {
			t.Fatalf("got %v want %d", v, i)
		}
	}
	m.Consumed(3)
	if err := m.Send(9, nil); err != nil {
		t.Fatalf("after consuming, send must succeed: %v", err)
	}
}
