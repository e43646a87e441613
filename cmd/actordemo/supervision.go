package main

// The supervision-tree scenario: a tree of workers under message load,
// random kills, restarts printed as they happen, and at the end the tree
// intact and the message counts reconciled.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

type demoWork struct{}

// counterWorker counts the work it handles.
type counterWorker struct {
	actor.ServerBase
	handled *atomic.Int64
}

func (w counterWorker) HandleInfo(c *actor.Context, msg any) {
	if _, ok := msg.(demoWork); ok {
		w.handled.Add(1)
	}
}

// supervisionScenario builds top -> 4 teams (one_for_one supervisors) ->
// 250 workers each, sends load from 2 goroutines while killing 40 random
// workers, and checks the tree and the counts.
func supervisionScenario(w io.Writer) error {
	const teams, perTeam, kills = 4, 250, 40
	var handled, restarts, reports atomic.Int64
	var mu sync.Mutex // serialises the printing of restarts and reports
	// The supervisors report each killed child (OTP's supervisor report).
	// By default reports go to the log package; here the first few are
	// shown and the rest counted.
	logger := func(format string, args ...any) {
		if reports.Add(1) <= 3 {
			mu.Lock()
			fmt.Fprintf(w, "  report: "+format+"\n", args...)
			mu.Unlock()
		}
	}
	sys, err := actor.Start(actor.Config{Logger: logger})
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
	}()
	teamPids := make([]atomic.Value, teams)
	top := supervisor.Spec{Strategy: supervisor.OneForOne, Intensity: 1000, Period: time.Second}
	for t := 0; t < teams; t++ {
		name := fmt.Sprintf("team%d", t)
		team := supervisor.Spec{Strategy: supervisor.OneForOne, Intensity: 1000, Period: time.Second,
			Hooks: &supervisor.Hooks{Restarted: func(_ actor.Pid, id string, old, new actor.Pid) {
				n := restarts.Add(1)
				if n <= 10 || n%10 == 0 {
					mu.Lock()
					fmt.Fprintf(w, "  restart #%d: %s/%s %v -> %v\n", n, name, id, old, new)
					mu.Unlock()
				}
			}}}
		for i := 0; i < perTeam; i++ {
			team.Children = append(team.Children, supervisor.ChildSpec{ID: fmt.Sprintf("worker%d", i),
				Start: supervisor.ServerStart(func(...any) actor.Server { return counterWorker{handled: &handled} })})
		}
		cs := supervisor.Child(name, team)
		start, idx := cs.Start, t
		cs.Start = func(c *actor.Context, args ...any) (actor.Pid, error) {
			pid, err := start(c, args...)
			if err == nil {
				teamPids[idx].Store(pid)
			}
			return pid, err
		}
		top.Children = append(top.Children, cs)
	}
	t0 := time.Now()
	topPid, err := supervisor.Start(sys, top)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "tree up: 1 top, %d teams, %d workers in %v\n", teams, teams*perTeam, time.Since(t0).Round(time.Millisecond))
	dropped0 := sys.Stats().Dropped
	workersOf := func(t int) []actor.Pid {
		cs, _ := supervisor.WhichChildren(sys, teamPids[t].Load().(actor.Pid))
		var out []actor.Pid
		for _, c := range cs {
			if !c.Pid.IsZero() {
				out = append(out, c.Pid)
			}
		}
		return out
	}
	var sent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 99))
			for {
				select {
				case <-stop:
					return
				default:
				}
				ps := workersOf(r.IntN(teams))
				for i := 0; i < 500 && len(ps) > 0; i++ {
					if sys.Send(ps[r.IntN(len(ps))], demoWork{}) == nil {
						sent.Add(1)
					}
				}
			}
		}(uint64(g))
	}
	r := rand.New(rand.NewPCG(7, 7))
	killed := map[actor.Pid]bool{}
	for len(killed) < kills {
		ps := workersOf(r.IntN(teams))
		p := ps[r.IntN(len(ps))]
		if !killed[p] {
			killed[p] = true
			sys.Exit(p, actor.Kill)
			time.Sleep(5 * time.Millisecond) // pace the kills so the load runs alongside
		}
	}
	close(stop)
	wg.Wait()
	deadline := time.Now().Add(2 * time.Second)
	for restarts.Load() < kills && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for handled.Load()+int64(sys.Stats().Dropped-dropped0) < sent.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	active := 0
	for t := 0; t < teams; t++ {
		n, err := supervisor.CountChildren(sys, teamPids[t].Load().(actor.Pid))
		if err != nil {
			return err
		}
		active += n.Active
	}
	h, d, s := handled.Load(), int64(sys.Stats().Dropped-dropped0), sent.Load()
	fmt.Fprintf(w, "kills %d, restarts %d, supervisor reports %d, workers running %d/%d, top alive %v\n",
		kills, restarts.Load(), reports.Load(), active, teams*perTeam, sys.Alive(topPid))
	fmt.Fprintf(w, "messages: sent %d = handled %d + lost with killed workers %d\n", s, h, s-h)
	if restarts.Load() != kills || active != teams*perTeam || !sys.Alive(topPid) {
		return fmt.Errorf("tree not intact")
	}
	if h > s || h+d < s {
		return fmt.Errorf("counts do not reconcile: sent %d handled %d dropped %d", s, h, d)
	}
	return nil
}
