package mailbox

import (
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"
)

// TestMailboxModel drives a Mailbox's counting (bound, Len, Taken, Close)
// from one goroutine against a reference queue: a Send is refused exactly
// when the bound is reached, Len is exact once pops are recorded, Taken
// counts every recorded pop, Close returns what was never taken and every
// later Send or Deliver fails.
func TestMailboxModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bound := rapid.IntRange(0, 4).Draw(t, "bound")
		var m Mailbox
		m.Init(bound)
		var (
			queue      []int
			unrecorded int // popped, not yet passed to Consumed
			taken      uint64
			closed     bool
			next       int
		)
		t.Repeat(map[string]func(*rapid.T){
			"send": func(t *rapid.T) {
				next++
				err := m.Send(next, nil)
				switch {
				case closed:
					if err != ErrClosed {
						t.Fatalf("Send after Close: %v", err)
					}
				case bound > 0 && len(queue)+unrecorded >= bound:
					if err != ErrFull {
						t.Fatalf("Send with %d queued, %d unrecorded, bound %d: %v", len(queue), unrecorded, bound, err)
					}
				default:
					if err != nil {
						t.Fatalf("Send: %v", err)
					}
					queue = append(queue, next)
				}
			},
			"deliver": func(t *rapid.T) {
				next++
				err := m.Deliver(next, nil)
				if closed != (err == ErrClosed) {
					t.Fatalf("Deliver (closed %v): %v", closed, err)
				}
				if !closed {
					queue = append(queue, next)
				}
			},
			"pop": func(t *rapid.T) {
				v, ok := m.Pop(nil)
				if ok != (len(queue) > 0) {
					t.Fatalf("Pop ok %v with %d queued", ok, len(queue))
				}
				if ok {
					if v != queue[0] {
						t.Fatalf("Pop %v, want %v", v, queue[0])
					}
					queue = queue[1:]
					unrecorded++
				}
			},
			"consumed": func(t *rapid.T) {
				m.Consumed(unrecorded)
				taken += uint64(unrecorded)
				unrecorded = 0
			},
			"close": func(t *rapid.T) {
				if closed {
					t.Skip()
				}
				m.Consumed(unrecorded) // the finaliser records the last batch first
				taken += uint64(unrecorded)
				unrecorded = 0
				if n := m.Close(); n != len(queue) {
					t.Fatalf("Close says %d left, the model %d", n, len(queue))
				}
				closed = true
			},
		})
		if closed {
			if m.Len() != 0 {
				t.Fatalf("Len %d after Close", m.Len())
			}
		} else if m.Len() != len(queue)+unrecorded {
			t.Fatalf("Len %d, want %d queued + %d unrecorded", m.Len(), len(queue), unrecorded)
		}
		if m.Taken() != taken {
			t.Fatalf("Taken %d, want %d", m.Taken(), taken)
		}
	})
}

// TestMailboxBoundConcurrent: producers race a consumer on a bounded
// mailbox. The lane never holds more than the bound, and every accepted
// message is taken exactly once.
func TestMailboxBoundConcurrent(t *testing.T) {
	const bound, producers, each = 8, 4, 20000
	var m Mailbox
	m.Init(bound)
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if m.Send(i, nil) == nil {
					accepted.Add(1)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	got := 0
	for {
		// Count what is linked in the lane before popping: never past the bound.
		linked := 0
		for n := m.user.tail.next.Load(); n != nil; n = n.next.Load() {
			linked++
		}
		if linked > bound {
			t.Fatalf("%d messages in a lane bounded at %d", linked, bound)
		}
		k := 0
		for {
			if _, ok := m.Pop(nil); !ok {
				break
			}
			k++
		}
		m.Consumed(k)
		got += k
		select {
		case <-done:
			for {
				if _, ok := m.Pop(nil); !ok {
					break
				}
				got++
			}
			if int64(got) != accepted.Load() {
				t.Fatalf("took %d, accepted %d", got, accepted.Load())
			}
			return
		default:
		}
	}
}

// TestMailboxCloseRacesRefusedSend: Close's count of messages never taken
// must not include a Send that was refused (ErrFull). Producers hammer a
// full mailbox while its owner closes it: each refusal adds to in and backs
// the add out, and a Close between the two must not count the refused
// message as dropped (a System would count it in Stats.Dropped although its
// sender got ErrMailboxFull).
func TestMailboxCloseRacesRefusedSend(t *testing.T) {
	const producers = 1
	for iter := 0; iter < 500; iter++ {
		var m Mailbox
		m.Init(1)
		if err := m.Send(0, nil); err != nil {
			t.Fatal(err)
		}
		var accepted atomic.Int64
		var wg sync.WaitGroup
		var started sync.WaitGroup
		for p := 0; p < producers; p++ {
			wg.Add(1)
			started.Add(1)
			go func() {
				defer wg.Done()
				first := true
				for {
					err := m.Send(1, nil)
					if first {
						started.Done()
						first = false
					}
					switch err {
					case nil:
						accepted.Add(1)
					case ErrClosed:
						return
					}
				}
			}()
		}
		started.Wait()
		n := m.Close()
		wg.Wait()
		if want := 1 + int(accepted.Load()); n != want {
			t.Fatalf("iteration %d: Close counted %d messages never taken; %d were accepted", iter, n, want)
		}
	}
}
