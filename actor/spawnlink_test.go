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
