package supervisor_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// A child whose handler calls runtime.Goexit (t.FailNow in a test helper)
// crashes with reason Panic{Value: actor.ErrGoexit}, and its supervisor
// restarts it as after any crash; a child whose Init calls Goexit fails
// its start at once, with that reason (it used to leave a zombie that no
// supervisor saw, and a start that waited out its timeout).

// gxServer calls runtime.Goexit in HandleCast, and in Init when told to.
type gxServer struct {
	actor.ServerBase
	initGoexit bool
}

func (s gxServer) Init(*actor.Context) error {
	if s.initGoexit {
		runtime.Goexit()
	}
	return nil
}

func (gxServer) HandleCast(*actor.Context, any) { runtime.Goexit() }

func (gxServer) HandleCall(c *actor.Context, req actor.Request) { c.Reply(req, "ok") }

// gxActor is a plain child actor whose handler calls runtime.Goexit.
func gxActor(c *actor.Context, _ ...any) (actor.Pid, error) {
	return c.SpawnLink(actor.ActorFunc(func(c *actor.Context, msg any) {
		if req, ok := msg.(actor.Request); ok {
			c.Reply(req, "ok")
			return
		}
		runtime.Goexit()
	}))
}

func isGoexit(r actor.Reason) bool {
	p, ok := r.(actor.Panic)
	return ok && p.Value == actor.ErrGoexit
}

// TestGoexitChildRestarted: a Server child's and a plain child's Goexit is
// a crash their OneForOne supervisor restarts them after, with one
// scheduler and many.
func TestGoexitChildRestarted(t *testing.T) {
	for _, scheds := range []int{1, 3} {
		t.Run(fmt.Sprintf("schedulers=%d", scheds), func(t *testing.T) {
			sys := testsys.Start(t, actor.Config{Schedulers: scheds, Logger: func(string, ...any) {}})
			type exited struct {
				id      string
				reason  actor.Reason
				restart bool
			}
			exits := make(chan exited, 8)
			restarted := make(chan actor.Pid, 8)
			sup, err := supervisor.Start(sys, supervisor.Spec{
				Intensity: 10, Period: time.Minute,
				Children: []supervisor.ChildSpec{
					{ID: "server", Start: supervisor.ServerStart(func(...any) actor.Server { return gxServer{} })},
					{ID: "actor", Start: gxActor},
				},
				Hooks: &supervisor.Hooks{
					ChildExited: func(_ actor.Pid, id string, _ actor.Pid, reason actor.Reason, restart bool) {
						exits <- exited{id, reason, restart}
					},
					Restarted: func(_ actor.Pid, _ string, _, new actor.Pid) { restarted <- new },
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			for round := range 3 {
				children, err := supervisor.WhichChildren(sys, sup)
				if err != nil {
					t.Fatal(err)
				}
				for _, ch := range children {
					if ch.ID == "server" {
						actor.Cast(sys, ch.Pid, "goexit")
					} else {
						sys.Send(ch.Pid, "goexit")
					}
					var ex exited
					select {
					case ex = <-exits:
					case <-time.After(10 * time.Second):
						t.Fatalf("round %d: the supervisor saw no exit of %s (a Goexit zombie?)", round, ch.ID)
					}
					if ex.id != ch.ID || !isGoexit(ex.reason) || !ex.restart {
						t.Fatalf("round %d: exit %+v, want %s exiting with the Goexit reason, restarted", round, ex, ch.ID)
					}
					var pid actor.Pid
					select {
					case pid = <-restarted:
					case <-time.After(10 * time.Second):
						t.Fatalf("round %d: %s not restarted", round, ch.ID)
					}
					if v, err := sys.Call(pid, "hello", 10*time.Second); err != nil || v != "ok" {
						t.Fatalf("round %d: the restarted %s: %v, %v", round, ch.ID, v, err)
					}
				}
			}
		})
	}
}

// TestGoexitChildInit: a supervisor whose child's Init calls Goexit fails
// its start promptly, with an error that errors.Is ErrGoexit.
func TestGoexitChildInit(t *testing.T) {
	for _, scheds := range []int{1, 3} {
		t.Run(fmt.Sprintf("schedulers=%d", scheds), func(t *testing.T) {
			sys := testsys.Start(t, actor.Config{Schedulers: scheds, Logger: func(string, ...any) {}})
			began := time.Now()
			_, err := supervisor.Start(sys, supervisor.Spec{
				Children: []supervisor.ChildSpec{
					{ID: "server", Start: supervisor.ServerStart(func(...any) actor.Server { return gxServer{initGoexit: true} },
						actor.InitTimeout(20*time.Second))},
				},
			})
			if !errors.Is(err, actor.ErrGoexit) {
				t.Fatalf("Start: %v, want an error that is ErrGoexit", err)
			}
			if d := time.Since(began); d > 10*time.Second {
				t.Fatalf("the start failed after %v (an init timeout?)", d)
			}
		})
	}
}
