//go:build unix

package main

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/disttest"
)

// The test binary is also the example's command: with DISTJOBS_CHILD set
// it runs as a worker node (see startWorker).
func TestMain(m *testing.M) {
	disttest.MainOrChild(m, "DISTJOBS_CHILD", func(args []string) int { return run(args, os.Stdout, os.Stderr) })
}

// startWorker starts a worker node (this test binary as the command) that
// keeps the dispatcher node as its seed; it is killed when t ends.
func startWorker(t *testing.T, name, seed string, epmdPort int) *disttest.Child {
	t.Helper()
	c := disttest.StartChild(t, name, "DISTJOBS_CHILD", "-name", name, "-seeds", seed,
		"-epmd-port", strconv.Itoa(epmdPort), "-workers", "3", "-delay", "2ms", "-cookie", "distjobs-test")
	t.Cleanup(func() {
		c.Kill(t)
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, c.Output())
		}
	})
	return c
}

// startDispatcher starts the dispatcher node named name, registered with
// the registrar at port, handing each completed job to results; it stops
// when t ends.
func startDispatcher(t *testing.T, name string, port int, results chan<- Result) *App {
	t.Helper()
	app, err := Start(Options{Name: name, Cookie: "distjobs-test", EPMDPort: port, Dispatch: true,
		Timeout: time.Second, OnDone: func(r Result) { results <- r }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := app.Stop(disttest.Ctx(t, 10*time.Second)); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return app
}

// workersOn counts the group's members on node, as the dispatcher sees them.
func workersOn(app *App, node string) int {
	k := 0
	for _, p := range app.Scope.Members(group) {
		if id, ok := p.Remote(); ok && string(id.Node) == node {
			k++
		}
	}
	return k
}

// The job queue with workers on two nodes keeps completing every job while
// the worker nodes are SIGKILLed one after the other (and the first one
// restarted in between): each job completes exactly once, with the right
// value, and jobs submitted after a kill are served by the node left.
func TestKilledWorkerNodes(t *testing.T) {
	_, port := disttest.Registrar(t)

	tag := strconv.Itoa(os.Getpid())
	dName, w1Name, w2Name := "djd"+tag+"@127.0.0.1", "djw1"+tag+"@127.0.0.1", "djw2"+tag+"@127.0.0.1"
	const perPhase = 300
	results := make(chan Result, 2*perPhase+16)
	app := startDispatcher(t, dName, port, results)

	w1 := startWorker(t, w1Name, dName, port)
	w2 := startWorker(t, w2Name, dName, port)
	disttest.Eventually(t, 30*time.Second, "both worker nodes' workers in the group", func() bool {
		return workersOn(app, w1Name) == 3 && workersOn(app, w2Name) == 3
	})

	seen := map[int]bool{}
	// phase submits ids [from, from+perPhase) at a steady pace, runs kill
	// once a third of them completed, and waits for all of them; it
	// returns the completions by node after the kill.
	phase := func(from int, kill func()) map[actor.Atom]int {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			for id := from; id < from+perPhase; id++ {
				select {
				case <-t.C:
				case <-stop:
					return
				}
				app.Submit(id, id)
			}
		}()
		after := map[actor.Atom]int{}
		killed := false
		deadline := time.After(60 * time.Second)
		for k := 0; k < perPhase; k++ {
			select {
			case r := <-results:
				if r.ID < from || r.ID >= from+perPhase || seen[r.ID] {
					t.Fatalf("job %d completed again or out of phase: %+v", r.ID, r)
				}
				seen[r.ID] = true
				if r.Value != work(r.N) || r.N != r.ID {
					t.Fatalf("job %d: %+v", r.ID, r)
				}
				if killed {
					after[r.Node]++
				}
			case <-deadline:
				t.Fatalf("%d of %d jobs completed within 60 s; stats %+v", k, perPhase, app.Stats.Snapshot())
			}
			if k == perPhase/3 {
				kill()
				killed = true
			}
		}
		return after
	}

	after := phase(0, func() { w1.Kill(t) })
	if after[actor.Atom(w2Name)] == 0 {
		t.Errorf("no job completed on %s after %s was killed: %v", w2Name, w1Name, after)
	}
	disttest.Eventually(t, 10*time.Second, "the killed node's workers to leave the group", func() bool { return workersOn(app, w1Name) == 0 })

	// w1 comes back (its seed reconnects it), then w2 is killed.
	startWorker(t, w1Name, dName, port)
	disttest.Eventually(t, 30*time.Second, "the restarted node's workers in the group", func() bool { return workersOn(app, w1Name) == 3 })
	after = phase(perPhase, func() { w2.Kill(t) })
	if after[actor.Atom(w1Name)] == 0 {
		t.Errorf("no job completed on %s after %s was killed: %v", w1Name, w2Name, after)
	}
	s := app.Stats.Snapshot()
	if s.Completed != 2*perPhase {
		t.Errorf("stats: %+v", s)
	}
	t.Logf("stats: %s", fmt.Sprintf("%+v", s))
}
