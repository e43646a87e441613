package colonytest_test

// Examples of the package's entry points. They need a *testing.T (the mode
// runs inside testing/synctest), which an Example does not get, so they
// show the code without running it; TestExampleBodies runs the same bodies.

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

// counterActor adds the ints it receives and answers calls with the sum.
type counterActor struct{ n int }

func (k *counterActor) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case int:
		k.n += m
	case actor.Request:
		c.Reply(m, k.n)
	}
}

// sumBody sends the drawn numbers from two actors and checks the sum.
func sumBody(t *rapid.T, sys *actor.System) {
	xs := rapid.SliceOfN(rapid.IntRange(0, 9), 1, 8).Draw(t, "xs")
	sum, err := sys.Spawn(&counterActor{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		sys.Send(sum, x)
	}
	got, err := actor.Call[int](sys, sum, "sum", time.Second)
	want := 0
	for _, x := range xs {
		want += x
	}
	if err != nil || got != want {
		t.Fatalf("sum = %d, %v; want %d", got, err, want)
	}
}

// probeBody forwards a message through an actor to a probe and waits for
// it on the virtual clock.
func probeBody(t *testing.T, sys *actor.System) {
	p, err := colonytest.NewProbe(sys)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) { c.Send(p.Pid(), msg) }))
	if err != nil {
		t.Fatal(err)
	}
	sys.SendAfter(fwd, "late", 10*time.Minute) // virtual: no real wait
	if err := p.ExpectMsg(time.Hour, "late"); err != nil {
		t.Fatal(err)
	}
}

func ExampleCheck() {
	var t *testing.T // the test's
	colonytest.Check(t, sumBody)
}

func ExampleRun() {
	var t *testing.T // the test's
	res := colonytest.Run(t, 42, probeBody)
	fmt.Println(res.Steps, res.Schedule)
}

func ExampleProbe_Expect() {
	var t *testing.T // the test's
	colonytest.Run(t, 1, func(t *testing.T, sys *actor.System) {
		p, _ := colonytest.NewProbe(sys)
		sys.Send(p.Pid(), "hello")
		msg, err := p.Expect(time.Second, func(m any) bool { return m == "hello" })
		fmt.Println(msg, err)
	})
}

func ExampleCrashes() {
	var t *testing.T // the test's
	// Up to two kills a run, of the program's workers only (not of its
	// supervisor or the probes), about once in 30 steps.
	colonytest.Check(t, func(t *rapid.T, sys *actor.System) {
		// start a supervised pool of workers, drive it, check that every
		// job is answered once even though a worker died
	}, colonytest.Crashes(2, 30, func(c colonytest.Candidate) bool {
		return c.Type == "*main.worker"
	}))
}

func TestExampleBodies(t *testing.T) {
	colonytest.Check(t, sumBody)
	res := colonytest.Run(t, 42, probeBody)
	if res.Steps == 0 {
		t.Fatal("probeBody ran no step")
	}
}
