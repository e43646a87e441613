package supervisor

// Chaos: a 3-level tree (top -> 10 mid supervisors -> 10 leaf supervisors
// each -> 100 workers each: 10,000 workers) under message load from
// outside, with 1,000 random Kills of workers. At the end the tree is
// intact (every leaf has all its workers running), every death is matched
// by one restart, the work messages reconcile (sent = handled + dropped at
// dead actors), no actor slot leaks (Stats.Live is the tree's size, then 0)
// and no goroutine leaks (goleak). Under -race the tree is smaller.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"go.uber.org/goleak"
)

type work struct{}

type loadWorker struct {
	actor.ServerBase
	handled *atomic.Int64
}

func (w loadWorker) HandleInfo(c *actor.Context, msg any) {
	if _, ok := msg.(work); ok {
		w.handled.Add(1)
	}
}

func TestChaosTree(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	mids, leaves, workers, kills := 10, 10, 100, 1000
	if raceEnabled || testing.Short() {
		mids, leaves, workers, kills = 4, 5, 50, 300
	}
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var handled, exits, restarts atomic.Int64
	hooks := &Hooks{
		ChildExited: func(_ actor.Pid, _ string, _ actor.Pid, r actor.Reason, restart bool) {
			if r != actor.Reason(actor.Killed) || !restart {
				t.Errorf("unexpected exit %v restart=%v", r, restart)
			}
			exits.Add(1)
		},
		Restarted: func(actor.Pid, string, actor.Pid, actor.Pid) { restarts.Add(1) },
	}
	leafPids := make([]atomic.Value, mids*leaves) // actor.Pid of each leaf supervisor
	top := Spec{Intensity: 1 << 20, Period: time.Second}
	for m := 0; m < mids; m++ {
		mid := Spec{Intensity: 1 << 20, Period: time.Second}
		for l := 0; l < leaves; l++ {
			leaf := Spec{Intensity: 1 << 20, Period: time.Second, Hooks: hooks}
			for w := 0; w < workers; w++ {
				leaf.Children = append(leaf.Children, ChildSpec{ID: fmt.Sprint("w", w),
					Start: ServerStart(func(...any) actor.Server { return loadWorker{handled: &handled} })})
			}
			idx := m*leaves + l
			cs := Child(fmt.Sprint("leaf", l), leaf)
			start := cs.Start
			cs.Start = func(c *actor.Context, args ...any) (actor.Pid, error) {
				pid, err := start(c, args...)
				if err == nil {
					leafPids[idx].Store(pid)
				}
				return pid, err
			}
			mid.Children = append(mid.Children, cs)
		}
		top.Children = append(top.Children, Child(fmt.Sprint("mid", m), mid))
	}
	topPid, err := Start(sys, top)
	if err != nil {
		t.Fatal(err)
	}
	treeSize := 1 + mids + mids*leaves + mids*leaves*workers
	if live := sys.Stats().Live; live != treeSize {
		t.Fatalf("live %d, want %d", live, treeSize)
	}
	dropped0 := sys.Stats().Dropped

	// Load: senders pick random workers of random leaves.
	var sent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	pidsOf := func(idx int) []actor.Pid {
		cs, err := WhichChildren(sys, leafPids[idx].Load().(actor.Pid))
		if err != nil {
			t.Errorf("leaf %d: %v", idx, err)
			return nil
		}
		out := make([]actor.Pid, 0, len(cs))
		for _, c := range cs {
			if !c.Pid.IsZero() {
				out = append(out, c.Pid)
			}
		}
		return out
	}
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				ps := pidsOf(r.IntN(len(leafPids)))
				for i := 0; i < 200 && len(ps) > 0; i++ {
					if sys.Send(ps[r.IntN(len(ps))], work{}) == nil {
						sent.Add(1)
					}
				}
			}
		}(uint64(g))
	}

	// Kills: distinct live workers.
	r := rand.New(rand.NewPCG(42, 7))
	killed := map[actor.Pid]bool{}
	for len(killed) < kills {
		ps := pidsOf(r.IntN(len(leafPids)))
		if len(ps) == 0 {
			continue
		}
		p := ps[r.IntN(len(ps))]
		if killed[p] {
			continue
		}
		killed[p] = true
		sys.Exit(p, actor.Kill)
	}
	close(stop)
	wg.Wait()

	// The tree ends intact: poll (with a deadline) until every restart is in.
	deadline := time.Now().Add(30 * time.Second)
	for restarts.Load() < int64(kills) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if e, rs := exits.Load(), restarts.Load(); e != int64(kills) || rs != int64(kills) {
		t.Fatalf("kills %d, exits %d, restarts %d", kills, e, rs)
	}
	for idx := range leafPids {
		n, err := CountChildren(sys, leafPids[idx].Load().(actor.Pid))
		if err != nil || n.Active != workers {
			t.Fatalf("leaf %d: %+v %v", idx, n, err)
		}
	}
	if !sys.Alive(topPid) {
		t.Fatal("top supervisor died")
	}
	// Every work message was handled or dropped at a dead worker.
	for time.Now().Before(deadline) {
		if handled.Load()+int64(sys.Stats().Dropped-dropped0) >= sent.Load() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if h, d, s := handled.Load(), int64(sys.Stats().Dropped-dropped0), sent.Load(); h > s || h+d < s {
		t.Fatalf("sent %d, handled %d, dropped %d", s, h, d)
	}
	if live := sys.Stats().Live; live != treeSize {
		t.Fatalf("live %d after chaos, want %d", live, treeSize)
	}
	t.Logf("%d workers, %d kills, %d restarts, %d messages sent, %d handled", mids*leaves*workers, kills, restarts.Load(), sent.Load(), handled.Load())

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if live := sys.Stats().Live; live != 0 {
		t.Fatalf("live %d after Shutdown", live)
	}
}
