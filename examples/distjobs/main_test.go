//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/epmd"
	"go.uber.org/goleak"
)

// The test binary is also the example's command: with DISTJOBS_CHILD set
// it runs as a worker node (see startWorker).
func TestMain(m *testing.M) {
	if os.Getenv("DISTJOBS_CHILD") != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// lockedBuf is a child's output.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// child is a worker node in a process of its own.
type child struct {
	name string
	cmd  *exec.Cmd
	out  *lockedBuf
	done chan struct{}
}

// startWorker starts a worker node (this test binary as the command) that
// keeps the dispatcher node as its seed.
func startWorker(t *testing.T, name, seed string, epmdPort int) *child {
	t.Helper()
	c := &child{name: name, out: &lockedBuf{}, done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-name", name, "-seeds", seed, "-epmd-port", strconv.Itoa(epmdPort),
		"-workers", "3", "-delay", "2ms", "-cookie", "distjobs-test")
	c.cmd.Env = append(os.Environ(), "DISTJOBS_CHILD=1")
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		c.kill(t)
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, c.out)
		}
	})
	return c
}

// kill SIGKILLs the node and waits for it to exit.
func (c *child) kill(t *testing.T) {
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s did not exit after SIGKILL", c.name)
	}
}

func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := epmd.Serve(l)
	defer reg.Close()
	port := l.Addr().(*net.TCPAddr).Port

	tag := strconv.Itoa(os.Getpid())
	dName, w1Name, w2Name := "djd"+tag+"@127.0.0.1", "djw1"+tag+"@127.0.0.1", "djw2"+tag+"@127.0.0.1"
	const perPhase = 300
	results := make(chan Result, 2*perPhase+16)
	app, err := Start(Options{Name: dName, Cookie: "distjobs-test", EPMDPort: port, Dispatch: true,
		Timeout: time.Second, OnDone: func(r Result) { results <- r }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}()

	w1 := startWorker(t, w1Name, dName, port)
	w2 := startWorker(t, w2Name, dName, port)
	eventually(t, 30*time.Second, "both worker nodes' workers in the group", func() bool {
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

	after := phase(0, func() { w1.kill(t) })
	if after[actor.Atom(w2Name)] == 0 {
		t.Errorf("no job completed on %s after %s was killed: %v", w2Name, w1Name, after)
	}
	eventually(t, 10*time.Second, "the killed node's workers to leave the group", func() bool { return workersOn(app, w1Name) == 0 })

	// w1 comes back (its seed reconnects it), then w2 is killed.
	startWorker(t, w1Name, dName, port)
	eventually(t, 30*time.Second, "the restarted node's workers in the group", func() bool { return workersOn(app, w1Name) == 3 })
	after = phase(perPhase, func() { w2.kill(t) })
	if after[actor.Atom(w1Name)] == 0 {
		t.Errorf("no job completed on %s after %s was killed: %v", w1Name, w2Name, after)
	}
	s := app.Stats.Snapshot()
	if s.Completed != 2*perPhase {
		t.Errorf("stats: %+v", s)
	}
	t.Logf("stats: %s", fmt.Sprintf("%+v", s))
}
