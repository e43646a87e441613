package supervisor

// A rapid model test: random crashes (normal, shutdown, abnormal) of
// permanent/transient/temporary children under each static strategy, with
// a fake clock moving forward between crashes, against a reference model
// of OTP's rules (do_restart, add_restart, one_for_all/rest_for_one
// terminate_children + start_children). After every step the real
// supervisor's children and liveness must equal the model's.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"pgregory.net/rapid"
)

type modelChild struct {
	id      string
	restart Restart
	running bool
}

type model struct {
	strategy Strategy
	max      int
	period   time.Duration
	kids     []*modelChild
	restarts []time.Duration // OTP keeps timestamps; here as clock offsets
	dead     bool
}

// crash applies OTP's rules to the death of kids[i] at time now.
func (m *model) crash(i int, reason actor.Reason, now time.Duration) {
	k := m.kids[i]
	abnormal := !actor.IsNormal(reason) && !actor.IsShutdown(reason)
	restart := k.restart == Permanent || (k.restart == Transient && abnormal)
	if !restart {
		k.running = false
		if k.restart == Temporary {
			m.kids = append(m.kids[:i], m.kids[i+1:]...)
		}
		return
	}
	var keep []time.Duration
	for _, t := range m.restarts {
		if t >= now-m.period {
			keep = append(keep, t)
		}
	}
	m.restarts = append(keep, now)
	if len(m.restarts) > m.max {
		m.dead = true
		return
	}
	switch m.strategy {
	case OneForOne:
		k.running = true
	case OneForAll, RestForOne:
		from := 0
		if m.strategy == RestForOne {
			from = i
		}
		var out []*modelChild
		for j, c := range m.kids {
			if j >= from && c.restart == Temporary && c != k {
				continue // terminated and forgotten
			}
			if j >= from {
				c.running = true
			}
			out = append(out, c)
		}
		m.kids = out
	}
}

type quietWorker struct{ actor.ServerBase }

func (quietWorker) HandleCast(c *actor.Context, msg any) { c.Stop(msg) }

func TestRestartModel(t *testing.T) {
	var fake atomic.Int64 // nanoseconds since base
	base := time.Unix(1_000_000, 0)
	clock = func() time.Time { return base.Add(time.Duration(fake.Load())) }
	defer func() { clock = time.Now }()

	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown(context.Background())

	rapid.Check(t, func(rt *rapid.T) {
		fake.Store(0)
		m := &model{
			strategy: rapid.SampledFrom([]Strategy{OneForOne, OneForAll, RestForOne}).Draw(rt, "strategy"),
			max:      rapid.IntRange(0, 4).Draw(rt, "intensity"),
			period:   time.Duration(rapid.IntRange(1, 10).Draw(rt, "period_s")) * time.Second,
		}
		n := rapid.IntRange(1, 5).Draw(rt, "children")
		exited := make(chan struct{}, 64)
		spec := Spec{Strategy: m.strategy, Intensity: m.max, Period: m.period,
			Hooks: &Hooks{ChildExited: func(actor.Pid, string, actor.Pid, actor.Reason, bool) { exited <- struct{}{} }}}
		for i := 0; i < n; i++ {
			r := rapid.SampledFrom([]Restart{Permanent, Transient, Temporary}).Draw(rt, "restart")
			id := fmt.Sprintf("c%d", i)
			m.kids = append(m.kids, &modelChild{id: id, restart: r, running: true})
			spec.Children = append(spec.Children, ChildSpec{ID: id, Restart: r,
				Start: ServerStart(func(...any) actor.Server { return quietWorker{} })})
		}
		sup, err := Start(sys, spec)
		if err != nil {
			rt.Fatal(err)
		}
		defer sys.Exit(sup, actor.Kill)
		steps := rapid.IntRange(1, 12).Draw(rt, "steps")
		for s := 0; s < steps && !m.dead; s++ {
			fake.Add(int64(time.Duration(rapid.IntRange(0, 4000).Draw(rt, "advance_ms")) * time.Millisecond))
			var running []int
			for i, k := range m.kids {
				if k.running {
					running = append(running, i)
				}
			}
			if len(running) == 0 {
				break
			}
			i := rapid.SampledFrom(running).Draw(rt, "victim")
			reason := rapid.SampledFrom([]actor.Reason{actor.Normal, actor.Shutdown, actor.Atom("boom")}).Draw(rt, "reason")
			cs, err := WhichChildren(sys, sup)
			if err != nil {
				rt.Fatal(err)
			}
			var pid actor.Pid
			for _, c := range cs {
				if c.ID == m.kids[i].id {
					pid = c.Pid
				}
			}
			actor.Cast(sys, pid, reason)
			<-exited
			m.crash(i, reason, time.Duration(fake.Load()))
			if m.dead {
				deadline := time.Now().Add(5 * time.Second)
				for sys.Alive(sup) {
					if time.Now().After(deadline) {
						rt.Fatal("supervisor should have given up")
					}
					time.Sleep(time.Millisecond)
				}
				return
			}
			got, err := WhichChildren(sys, sup)
			if err != nil {
				rt.Fatalf("supervisor died; model alive: %v", err)
			}
			if len(got) != len(m.kids) {
				rt.Fatalf("children %v, model %d", got, len(m.kids))
			}
			for j, c := range got {
				if c.ID != m.kids[j].id || c.Pid.IsZero() == m.kids[j].running {
					rt.Fatalf("child %d: got %+v, model %+v", j, c, *m.kids[j])
				}
			}
		}
	})
}

func TestIntensityWindow(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		max := rapid.IntRange(0, 5).Draw(rt, "max")
		period := time.Duration(rapid.IntRange(0, 100).Draw(rt, "period")) * time.Millisecond
		in := intensity{max: max, period: period}
		var all []time.Time
		now := time.Unix(0, 0)
		for i := rapid.IntRange(1, 40).Draw(rt, "n"); i > 0; i-- {
			now = now.Add(time.Duration(rapid.IntRange(0, 50).Draw(rt, "dt")) * time.Millisecond)
			all = append(all, now)
			// Reference: restarts within [now-period, now] among all seen
			// since the last give-up (a supervisor that gives up is gone,
			// so a give-up ends the check).
			in_window := 0
			for _, t := range all {
				if !t.Before(now.Add(-period)) {
					in_window++
				}
			}
			if got, want := in.add(now), in_window <= max; got != want {
				rt.Fatalf("add at %v: got %v want %v", now, got, want)
			}
			if in_window > max {
				return
			}
		}
	})
}
