package main

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDemo(t *testing.T) {
	var b strings.Builder
	if err := demo(&b); err != nil || strings.Count(b.String(), "\n") != 5 {
		t.Fatalf("demo: %v\n%s", err, b.String())
	}
}

// jobOf is the i-th test job: every kind, Slow ones with a short deadline.
func jobOf(i int, notify actor.Pid) Job {
	j := Job{Kind: Kind(i % 8), N: i, Notify: notify}
	if j.Kind == Slow {
		j.Deadline = 30 * time.Millisecond
	} else if j.Kind > Slow {
		j.Kind = Square
	}
	return j
}

func TestJobQueue(t *testing.T) {
	var panics atomic.Int64 // worker deaths seen by the pool's supervisor
	sys, err := start(8, &supervisor.Hooks{ChildExited: func(_ actor.Pid, _ string, _ actor.Pid, r actor.Reason, _ bool) {
		if _, ok := r.(actor.Panic); ok {
			panics.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Every Result notified reaches the audit actor; a call reads the count.
	seen := map[uint64][]Result{}
	audit, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch m := msg.(type) {
		case Result:
			seen[m.ID] = append(seen[m.ID], m)
		case actor.Request:
			c.Reply(m, len(seen))
		}
	}))
	var mu sync.Mutex
	jobs, results := map[uint64]Job{}, map[uint64]Result{}
	record := func(id uint64, j Job, r Result) {
		mu.Lock()
		jobs[id], results[id] = j, r
		mu.Unlock()
	}

	// Four goroutines submit 20 jobs each, then wait for each with a Call.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			ids := map[uint64]Job{}
			for i := range 20 {
				j := jobOf(g*20+i, audit)
				id, err := call[uint64](sys, sys, submit(j))
				if err != nil {
					t.Error(err)
					return
				}
				ids[id] = j
			}
			for id, j := range ids {
				r, err := call[Result](sys, sys, ask{"wait", id})
				if err != nil {
					t.Error(id, err)
				}
				record(id, j, r)
			}
		})
	}

	// An actor submits 20 more, notified to itself, and takes each Result
	// with a selective Receive, in id order, whatever order they come in.
	client, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		defer wg.Done()
		var ids []uint64
		mine := map[uint64]Job{}
		for i := range 20 {
			j := jobOf(80+i, c.Self())
			id, err := call[uint64](sys, c, submit(j))
			if err != nil {
				t.Error(err)
				return
			}
			ids, mine[id] = append(ids, id), j
		}
		for _, id := range ids {
			m, err := c.Receive(func(m any) bool { r, ok := m.(Result); return ok && r.ID == id }, time.Second)
			if err != nil {
				t.Error(id, err)
				return
			}
			record(id, mine[id], m.(Result))
			c.Send(audit, m) // audited with the others
		}
	}))
	wg.Add(1)
	sys.Send(client, "go")

	// Cancel five jobs while they wait for a retry.
	cancelled := 0
	for range 5 {
		j := Job{Kind: AlwaysPanic, Notify: audit}
		id, _ := call[uint64](sys, sys, submit(j))
		for ok := false; !ok; time.Sleep(100 * time.Microsecond) {
			r, err := call[Result](sys, sys, ask{"status", id})
			if err != nil || r.State > Retrying {
				t.Fatalf("job %d: %+v %v", id, r, err)
			}
			if r.State == Retrying { // it may be running again by the cancel
				ok, _ = call[bool](sys, sys, ask{"cancel", id})
			}
		}
		r, _ := call[Result](sys, sys, ask{"wait", id})
		record(id, j, r)
		cancelled += r.Attempts
	}

	wg.Wait()
	if n, err := actor.Call[int](sys, audit, "count", time.Second); n != len(jobs) || err != nil {
		t.Errorf("audit saw %d jobs (%v), want %d", n, err, len(jobs))
	}
	if err := sys.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := int64(cancelled) // worker panics
	for id, j := range jobs {
		r := results[id]
		if len(seen[id]) != 1 || seen[id][0] != r {
			t.Errorf("job %d: notified %v, waited %v", id, seen[id], r)
		}
		switch {
		case r.State == Cancelled:
		case j.Kind == Square && r.State == Done && r.Attempts == 1 && r.Value == j.N*j.N:
		case j.Kind == PanicOnce && r.State == Done && r.Attempts == 2 && r.Value == j.N*j.N:
			want++
		case j.Kind == AlwaysPanic && r.State == Failed && r.Attempts == maxAttempts:
			want += maxAttempts
		case j.Kind == Slow && r.State == Failed && r.Err == "deadline exceeded":
		default:
			t.Errorf("job %d (%+v): %+v", id, j, r)
		}
	}
	if got := panics.Load(); got != want {
		t.Errorf("%d worker panics, want %d", got, want)
	}
}
