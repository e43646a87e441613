package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

func stopperChild(id string) supervisor.ChildSpec {
	return supervisor.ChildSpec{ID: id, Start: supervisor.ServerStart(func(...any) actor.Server { return stopper{} })}
}

// The spec of a supervisor started with an InitFunc is computed in its
// Init, afresh when its own supervisor restarts it.
func TestInitFuncRecomputedAtRestart(t *testing.T) {
	sys := testsys.Start(t, actor.Config{})
	var mu sync.Mutex
	inits := 0
	sub := supervisor.ChildInit("sub", func(c *actor.Context) (supervisor.Spec, error) {
		mu.Lock()
		inits++
		n := inits
		mu.Unlock()
		spec := supervisor.Spec{Intensity: 0, Period: time.Hour, Name: "sub"}
		for i := 1; i <= n; i++ {
			spec.Children = append(spec.Children, stopperChild(fmt.Sprint("w", i)))
		}
		return spec, nil
	})
	top, err := supervisor.Start(sys, supervisor.Spec{Intensity: 3, Period: time.Hour, Children: []supervisor.ChildSpec{sub}})
	if err != nil {
		t.Fatal(err)
	}
	subPid, ok := sys.Whereis("sub")
	if !ok {
		t.Fatal("the InitFunc's Name was not registered")
	}
	kids, _ := supervisor.WhichChildren(sys, subPid)
	if len(kids) != 1 {
		t.Fatalf("first init: %d children", len(kids))
	}
	w, _ := sys.Monitor(subPid)
	actor.Cast(sys, kids[0].Pid, actor.Atom("boom")) // intensity 0: sub gives up, top restarts it
	<-w.Done()
	var again actor.Pid
	deadline := time.Now().Add(10 * time.Second)
	for {
		if p, ok := sys.Whereis("sub"); ok && p != subPid {
			again = p
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sub was not restarted")
		}
		time.Sleep(time.Millisecond)
	}
	kids, _ = supervisor.WhichChildren(sys, again)
	if len(kids) != 2 {
		t.Fatalf("second init: %d children; want 2", len(kids))
	}
	counts, _ := supervisor.CountChildren(sys, top)
	if counts.Active != 1 {
		t.Fatalf("top counts %+v", counts)
	}
}

func TestInitFuncErrors(t *testing.T) {
	sys := testsys.Start(t, actor.Config{})
	if _, err := supervisor.StartInit(sys, nil); !errors.Is(err, actor.ErrNilBehaviour) {
		t.Fatalf("nil InitFunc: %v", err)
	}
	noConfig := errors.New("no config")
	_, err := supervisor.StartInit(sys, func(*actor.Context) (supervisor.Spec, error) { return supervisor.Spec{}, noConfig })
	if !errors.Is(err, noConfig) {
		t.Fatalf("failing InitFunc: %v", err)
	}
	_, err = supervisor.StartInit(sys, func(*actor.Context) (supervisor.Spec, error) { return supervisor.Spec{}, actor.ErrIgnore })
	if !errors.Is(err, actor.ErrIgnore) {
		t.Fatalf("ignoring InitFunc: %v", err)
	}
	sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("taken"))
	_, err = supervisor.StartInit(sys, func(*actor.Context) (supervisor.Spec, error) { return supervisor.Spec{Name: "taken"}, nil })
	if !errors.Is(err, actor.ErrNameTaken) {
		t.Fatalf("InitFunc naming a taken name: %v", err)
	}
}

// A bad spec is the starter's error, and only that: no crash report of the
// supervisor besides.
func TestBadSpecIsReturnedNotReported(t *testing.T) {
	var mu sync.Mutex
	var crashes []actor.Report
	sys := testsys.Start(t, actor.Config{Logger: func(string, ...any) {}, Reporter: func(r actor.Report) {
		if r.Kind == actor.CrashReport {
			mu.Lock()
			crashes = append(crashes, r)
			mu.Unlock()
		}
	}})
	_, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{{ID: "x"}}}) // no Start
	var se supervisor.StartSpecError
	if !errors.As(err, &se) {
		t.Fatalf("bad spec: %v", err)
	}
	sys.Shutdown(context.Background()) // every report is written by now
	mu.Lock()
	defer mu.Unlock()
	if len(crashes) != 0 {
		t.Fatalf("a bad spec was also reported as a crash: %+v", crashes)
	}
}

// Hooks.Started tells a service's main that the tree under RunSystem is up,
// where it polled Whereis.
func TestStartedHookUnderRunSystem(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	up := make(chan actor.Pid, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- supervisor.RunSystem(ctx, sys, supervisor.Spec{
			Name:     "top",
			Children: []supervisor.ChildSpec{stopperChild("a"), stopperChild("b")},
			Hooks:    &supervisor.Hooks{Started: func(sup actor.Pid) { up <- sup }},
		}, 5*time.Second)
	}()
	var top actor.Pid
	select {
	case top = <-up:
	case <-time.After(10 * time.Second):
		t.Fatal("Started was not called")
	}
	counts, err := supervisor.CountChildren(sys, top)
	if err != nil || counts.Active != 2 {
		t.Fatalf("when Started ran: %+v %v", counts, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// ExampleStartInit: a supervisor computes its children when it starts (and
// again at each restart), as OTP's Module:init/1.
func ExampleStartInit() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	workers := 3 // read from configuration, say
	sup, _ := supervisor.StartInit(sys, func(*actor.Context) (supervisor.Spec, error) {
		spec := supervisor.Spec{Strategy: supervisor.OneForOne}
		for i := 0; i < workers; i++ {
			spec.Children = append(spec.Children, stopperChild(fmt.Sprint("worker", i)))
		}
		return spec, nil
	})
	counts, _ := supervisor.CountChildren(sys, sup)
	fmt.Println(counts.Active)
	// Output: 3
}
