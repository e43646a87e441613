package colonytest_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

// sleeper arms a timer to itself up to an hour away, and again when it
// fires, twice; then it tells the counter.
type sleeper struct {
	r       *rand.Rand
	left    int
	counter actor.Pid
}

type wake struct{}

func (s *sleeper) Init(c *actor.Context) {
	c.SendAfter(c.Self(), wake{}, time.Duration(s.r.Int64N(int64(time.Hour/2))))
}

func (s *sleeper) Receive(c *actor.Context, msg any) {
	if _, ok := msg.(wake); !ok {
		return
	}
	if s.left--; s.left > 0 {
		c.SendAfter(c.Self(), wake{}, time.Duration(s.r.Int64N(int64(time.Hour/2))))
		return
	}
	c.Send(s.counter, 1)
	c.Stop(actor.Normal)
}

type counter struct{ n int }

func (k *counter) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case int:
		k.n += m
	case actor.Request:
		c.Reply(m, k.n)
	}
}

// TestTenThousandActorsAnHourOfTimers: 10k actors, 20k timers spread over
// an hour of virtual time, in seconds of real time.
func TestTenThousandActorsAnHourOfTimers(t *testing.T) {
	const n = 10000
	t0 := time.Now()
	res := colonytest.Run(t, 3, func(t *testing.T, sys *actor.System) {
		cp, err := sys.Spawn(&counter{})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 3))
		for i := 0; i < n; i++ {
			if _, err := sys.Spawn(&sleeper{r: rand.New(rand.NewPCG(r.Uint64(), 0)), left: 2, counter: cp}); err != nil {
				t.Fatal(err)
			}
		}
		v0 := time.Now()
		time.Sleep(time.Hour) // virtual: every timer is due by now
		got, err := actor.Call[int](sys, cp, "count", time.Second)
		if err != nil || got != n {
			t.Fatalf("after an hour: %d of %d actors done (%v)", got, n, err)
		}
		if d := time.Since(v0); d != time.Hour {
			t.Errorf("virtual time moved %v, want 1h", d)
		}
	}, colonytest.TraceLines(20))
	wall := time.Since(t0)
	t.Logf("%d actors, %d timers, an hour of virtual time: %d steps in %v", n, 2*n, res.Steps, wall)
	if wall > time.Minute {
		t.Errorf("took %v of real time", wall)
	}
}
