package supervisor_test

import (
	"context"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// slowStop traps exits and takes a while in Terminate.
type slowStop struct{ actor.ServerBase }

func (slowStop) Init(c *actor.Context) error { c.TrapExit(true); return nil }
func (slowStop) Terminate(*actor.Context, actor.Reason) {
	time.Sleep(100 * time.Millisecond)
}

// A tree whose root is a plain actor (it dies at once on Shutdown) still
// stops in reverse order: the supervisor, told through its link, stops c
// (slow to terminate) before b and a. A System.Shutdown whose second step
// signalled every actor left as soon as the roots were gone would kill the
// non-trapping a and b while the supervisor still waited for c.
func TestShutdownKeepsTreeOrderUnderPlainRoot(t *testing.T) {
	sys := testsys.Start(t, actor.Config{Schedulers: 2})
	kids := make(chan []actor.Pid, 1)
	root, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if m != "start" {
			return
		}
		sup, err := supervisor.StartLink(c, supervisor.Spec{Children: []supervisor.ChildSpec{
			{ID: "a", Start: supervisor.ServerStart(func(...any) actor.Server { return idleServer{} })},
			{ID: "b", Start: supervisor.ServerStart(func(...any) actor.Server { return idleServer{} })},
			{ID: "c", Start: supervisor.ServerStart(func(...any) actor.Server { return slowStop{} })},
		}})
		var pids []actor.Pid
		if err == nil {
			list, _ := supervisor.WhichChildren(c, sup)
			for _, ch := range list {
				pids = append(pids, ch.Pid)
			}
		}
		kids <- pids
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(root, "start")
	var pids []actor.Pid
	select {
	case pids = <-kids:
	case <-time.After(5 * time.Second):
		t.Fatal("the tree did not start")
	}
	if len(pids) != 3 {
		t.Fatalf("children %v", pids)
	}
	a, b, c := pids[0], pids[1], pids[2]
	// Watch from a goroutine: whenever a or b is found dead, c must be.
	bad := make(chan string, 1)
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			cDead := !sys.Alive(c)
			if (!sys.Alive(a) || !sys.Alive(b)) && !cDead && sys.Alive(c) {
				bad <- "a or b stopped while c was still running"
				return
			}
			if cDead && !sys.Alive(a) && !sys.Alive(b) {
				return
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-watched
	select {
	case msg := <-bad:
		t.Fatal(msg)
	default:
	}
}
