package actor_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestSpawnLinkRacesParentDeath: a parent killed while it is in the middle of
// SpawnLink never leaves a child running. Either the spawn fails (the
// parent's half of the link could not be made) and the child never runs, or
// the link was made and the parent's death signal reaches the child.
func TestSpawnLinkRacesParentDeath(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	rounds := 300
	if testing.Short() || raceBuild {
		rounds = 100
	}
	idle := actor.ActorFunc(func(*actor.Context, any) {})
	for r := range rounds {
		parent, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
			for range 50 {
				if _, err := c.SpawnLink(idle); err != nil {
					return // killed meanwhile
				}
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(parent, "go")
		if r%3 != 0 {
			spinFor(time.Duration(r%40) * time.Microsecond)
		}
		sys.Exit(parent, actor.Kill)
		eventually(t, 10*time.Second, "every child to die with its parent", func() bool {
			return sys.Stats().Live == 0
		})
	}
}

// TestSpawnMonitorChildExitsAtOnce: the monitor of SpawnMonitor exists
// before the child can run, so a child that exits at once (here on the
// other scheduler, as soon as it is queued) gives a Down with its own
// reason, never noproc, as spawn_monitor. It spawned, then monitored, and
// lost that race now and then.
func TestSpawnMonitorChildExitsAtOnce(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	rounds := 500
	if testing.Short() || raceBuild {
		rounds = 200
	}
	type result struct {
		ref    actor.Ref
		reason actor.Reason
		err    error
	}
	out := make(chan result, 1)
	parent, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if m != "go" {
			return
		}
		_, ref, err := c.SpawnMonitor(diesInInit{})
		if err != nil {
			out <- result{err: err}
			return
		}
		d, err := c.Receive(func(m any) bool { d, ok := m.(actor.Down); return ok && d.Ref == ref }, 5*time.Second)
		if err != nil {
			out <- result{err: err}
			return
		}
		out <- result{ref: ref, reason: d.(actor.Down).Reason}
	}))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < rounds; i++ {
		sys.Send(parent, "go")
		r := recv(t, out)
		if r.err != nil {
			t.Fatalf("round %d: %v", i, r.err)
		}
		if r.reason != actor.Atom("boom") {
			t.Fatalf("round %d: Down reason %v, want boom (the child's)", i, r.reason)
		}
	}
}

// diesInInit stops with boom as soon as it runs.
type diesInInit struct{}

func (diesInInit) Init(c *actor.Context)       { c.Stop(actor.Atom("boom")) }
func (diesInInit) Receive(*actor.Context, any) {}
