package actor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/colonyrt/colony/actor"
)

type stopInInit struct{ r actor.Reason }

func (s stopInInit) Init(c *actor.Context)     { c.Stop(s.r) }
func (stopInInit) Receive(*actor.Context, any) {}

// A child that exits in its Init, watched from birth, is reported with its
// own reason every time: a Monitor taken after Spawn could find it dead and
// say noproc.
func TestSystemSpawnMonitorChildExitsAtOnce(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	for i := 0; i < 500; i++ {
		r := actor.Atom(fmt.Sprint("r", i))
		pid, w, err := sys.SpawnMonitor(stopInInit{r})
		if err != nil {
			t.Fatal(err)
		}
		<-w.Done()
		if w.Reason() != r {
			t.Fatalf("spawn %d (%v): reason %v; want %v", i, pid, w.Reason(), r)
		}
	}
}

func TestSystemSpawnMonitorErrors(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	if _, w, err := sys.SpawnMonitor(nil); !errors.Is(err, actor.ErrNilBehaviour) || w != nil {
		t.Fatalf("nil behaviour: %v %v", w, err)
	}
	if _, _, err := sys.SpawnMonitor(stopInInit{actor.Normal}, actor.MailboxBound(-1)); !errors.Is(err, actor.ErrBadOption) {
		t.Fatalf("bad option: %v", err)
	}
	// A Watch stopped before the actor exits is never done.
	pid, w, err := sys.SpawnMonitor(actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) }))
	if err != nil {
		t.Fatal(err)
	}
	if !w.Stop() {
		t.Fatal("Stop of a live actor's Watch: false")
	}
	dead, _ := sys.Monitor(pid)
	sys.Send(pid, "stop")
	<-dead.Done()
	select {
	case <-w.Done():
		t.Fatal("a stopped Watch closed Done")
	default:
	}
	sys2 := start(t, actor.Config{Schedulers: 1})
	sys2.Shutdown(context.Background())
	if _, _, err := sys2.SpawnMonitor(stopInInit{actor.Normal}); !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("after Shutdown: %v", err)
	}
}

// ExampleSystem_SpawnMonitor: main spawns a worker and learns how it
// ended, even when it ends at once.
func ExampleSystem_SpawnMonitor() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	_, w, _ := sys.SpawnMonitor(stopInInit{actor.Atom("no_config")})
	<-w.Done()
	fmt.Println(w.Reason())
	// Output: no_config
}
