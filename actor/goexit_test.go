package actor_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// A handler that calls runtime.Goexit (t.FailNow in a test helper, a
// library's log.Fatal-like exit of a goroutine) ends its actor with reason
// Panic{Value: ErrGoexit, Stack}: links, monitors and supervisors are told,
// a crash report is written, and the worker goroutine that dies with it
// hands its scheduler role to a fresh one, so the System runs on. Before,
// the actor stayed Alive for ever, nobody was told, its role was lost with
// its goroutine (with one scheduler, the System stopped running actors) and
// Shutdown ran out its context.

// goexitScheds are the scheduler counts the tests run with: the lost role
// stalls everything with one; with several the others hide it.
var goexitScheds = []int{1, 3}

// goexitSys starts a System whose crash reports go to the returned
// channel (buffered; reports past its capacity are dropped).
func goexitSys(t *testing.T, scheds int) (*actor.System, <-chan actor.Report) {
	t.Helper()
	reports := make(chan actor.Report, 64)
	sys := start(t, actor.Config{Schedulers: scheds, Reporter: func(r actor.Report) {
		if r.Kind != actor.CrashReport {
			return
		}
		select {
		case reports <- r:
		default:
		}
	}})
	return sys, reports
}

// checkGoexitReason fails unless r is the reason of a handler that called
// runtime.Goexit, with a stack that shows where.
func checkGoexitReason(t *testing.T, what string, r actor.Reason) {
	t.Helper()
	p, ok := r.(actor.Panic)
	if !ok || p.Value != actor.ErrGoexit {
		t.Fatalf("%s: reason %#v, want Panic{Value: ErrGoexit}", what, r)
	}
	if !strings.Contains(p.Stack, "runtime.Goexit") {
		t.Fatalf("%s: the reason's stack does not show the Goexit:\n%s", what, p.Stack)
	}
	if !errors.Is(p, actor.ErrGoexit) {
		t.Fatalf("%s: errors.Is(reason, ErrGoexit) is false", what)
	}
}

// awaitWatch waits for a Watch's Done.
func awaitWatch(t *testing.T, w *actor.Watch, what string) actor.Reason {
	t.Helper()
	select {
	case <-w.Done():
		return w.Reason()
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no exit within 10 s (a Goexit zombie?)", what)
		return nil
	}
}

// checkRuns checks that the System still runs actors on every role: n
// actors each answer a call.
func checkRuns(t *testing.T, sys *actor.System, n int) {
	t.Helper()
	for i := range n {
		pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if req, ok := msg.(actor.Request); ok {
				c.Reply(req, req.Msg)
				c.Stop(actor.Normal)
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		v, err := sys.Call(pid, i, 10*time.Second)
		if err != nil || v != i {
			t.Fatalf("the System stopped running actors: call %d: %v, %v", i, v, err)
		}
	}
}

// checkShutdown shuts sys down within 10 s.
func checkShutdown(t *testing.T, sys *actor.System) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestGoexitInHandler: a plain handler's Goexit ends the actor with the
// Goexit reason; a linked trapping actor gets the Exit, a monitoring one
// the Down, a Watch its Done, the crash is reported; calls to it fail with
// noproc; the System runs on with one scheduler and many, through ten
// such deaths in a row, and shuts down.
func TestGoexitInHandler(t *testing.T) {
	for _, scheds := range goexitScheds {
		t.Run(fmt.Sprintf("schedulers=%d", scheds), func(t *testing.T) {
			sys, reports := goexitSys(t, scheds)
			for round := range 10 {
				victim, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
					if msg == "goexit" {
						runtime.Goexit()
					}
				}))
				if err != nil {
					t.Fatal(err)
				}
				signals := make(chan any, 2)
				watcher, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
					switch r := msg.(type) {
					case actor.Request:
						err := c.Link(victim)
						if err == nil {
							_, err = c.Monitor(victim)
						}
						c.Reply(r, err)
					case actor.Exit, actor.Down:
						signals <- msg
					}
				}), actor.TrapExit())
				if err != nil {
					t.Fatal(err)
				}
				if v, err := sys.Call(watcher, "watch", 10*time.Second); err != nil || v != nil {
					t.Fatalf("link and monitor: %v, %v", v, err)
				}
				w, err := sys.Monitor(victim)
				if err != nil {
					t.Fatal(err)
				}
				if err := sys.Send(victim, "goexit"); err != nil {
					t.Fatal(err)
				}
				checkGoexitReason(t, "Watch", awaitWatch(t, w, "victim"))
				for range 2 {
					switch m := recv(t, signals).(type) {
					case actor.Exit:
						if m.From != victim {
							t.Fatalf("Exit from %v, want %v", m.From, victim)
						}
						checkGoexitReason(t, "Exit", m.Reason)
					case actor.Down:
						checkGoexitReason(t, "Down", m.Reason)
					}
				}
				rep := recv(t, reports)
				if rep.Pid != victim {
					t.Fatalf("crash report about %v, want %v", rep.Pid, victim)
				}
				checkGoexitReason(t, "crash report", rep.Reason)
				if sys.Alive(victim) {
					t.Fatal("the victim is still Alive after its Down")
				}
				if _, err := sys.Call(victim, "hello", 10*time.Second); !errors.Is(err, actor.ErrNoProc) {
					t.Fatalf("round %d: call to the dead victim: %v, want ErrNoProc", round, err)
				}
				sys.Exit(watcher, actor.Kill)
				checkRuns(t, sys, 2*scheds)
			}
			checkShutdown(t, sys)
		})
	}
}

// TestGoexitAfterWait: a handler that blocked (a Sleep, a Receive, a Call)
// runs on a goroutine resumed from its wait; its Goexit ends the actor
// and hands the role it resumed with on.
func TestGoexitAfterWait(t *testing.T) {
	waits := map[string]func(c *actor.Context){
		"sleep":   func(c *actor.Context) { c.Sleep(time.Millisecond) },
		"receive": func(c *actor.Context) { c.Receive(func(m any) bool { return m == "go on" }, 10*time.Second) },
	}
	for _, scheds := range goexitScheds {
		for name, wait := range waits {
			t.Run(fmt.Sprintf("schedulers=%d/%s", scheds, name), func(t *testing.T) {
				sys, _ := goexitSys(t, scheds)
				pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
					if msg == "start" {
						wait(c)
						runtime.Goexit()
					}
				}))
				if err != nil {
					t.Fatal(err)
				}
				w, _ := sys.Monitor(pid)
				sys.Send(pid, "start")
				sys.Send(pid, "go on")
				checkGoexitReason(t, "Watch", awaitWatch(t, w, "actor"))
				checkRuns(t, sys, 2*scheds)
				checkShutdown(t, sys)
			})
		}
	}
}

// TestGoexitOrphanedHandler: an actor killed while its handler runs
// outside the runtime exits killed at once; when the orphaned handler then
// calls Goexit, nothing more is reported about the actor, and its
// goroutine's role is handed on.
func TestGoexitOrphanedHandler(t *testing.T) {
	for _, scheds := range goexitScheds {
		t.Run(fmt.Sprintf("schedulers=%d", scheds), func(t *testing.T) {
			sys, reports := goexitSys(t, scheds)
			inside, release := make(chan struct{}), make(chan struct{})
			var exited atomic.Bool
			pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
				close(inside)
				<-release // blocked outside the runtime
				defer exited.Store(true)
				runtime.Goexit()
			}))
			if err != nil {
				t.Fatal(err)
			}
			w, _ := sys.Monitor(pid)
			sys.Send(pid, "start")
			recv(t, inside)
			sys.Exit(pid, actor.Kill)
			if r := awaitWatch(t, w, "killed actor"); r != actor.Killed {
				t.Fatalf("reason %v, want killed", r)
			}
			close(release)
			eventually(t, 10*time.Second, "the orphaned handler's Goexit", exited.Load)
			checkRuns(t, sys, 2*scheds)
			select {
			case r := <-reports:
				t.Fatalf("a crash report about the killed actor: %v", r.Text)
			default:
			}
			checkShutdown(t, sys)
		})
	}
}

// TestGoexitOnRetiredRole: handlers that held their roles past the
// watchdog's threshold (blocked outside the runtime, one on every role,
// with work waiting) lost the roles to fresh workers; their Goexits
// afterwards end their actors and give up the retired roles without harm.
func TestGoexitOnRetiredRole(t *testing.T) {
	for _, scheds := range goexitScheds {
		t.Run(fmt.Sprintf("schedulers=%d", scheds), func(t *testing.T) {
			sys := start(t, actor.Config{Schedulers: scheds, WatchdogThreshold: 5 * time.Millisecond, Logger: func(string, ...any) {}})
			inside, release := make(chan struct{}, scheds), make(chan struct{})
			watches := make([]*actor.Watch, scheds)
			for i := range watches {
				pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
					inside <- struct{}{}
					<-release // blocked outside the runtime
					runtime.Goexit()
				}))
				if err != nil {
					t.Fatal(err)
				}
				watches[i], _ = sys.Monitor(pid)
				sys.Send(pid, "start")
			}
			for range scheds {
				recv(t, inside) // every role is held by a blocked handler
			}
			// Work waiting: the watchdog retires the stuck roles and the
			// System runs on beside them.
			checkRuns(t, sys, 2*scheds)
			eventually(t, 10*time.Second, "a retake", func() bool {
				n := uint64(0)
				for _, s := range sys.Stats().Schedulers {
					n += s.Retakes
				}
				return n > 0
			})
			close(release)
			for _, w := range watches {
				checkGoexitReason(t, "Watch", awaitWatch(t, w, "actor"))
			}
			checkRuns(t, sys, 2*scheds)
			checkShutdown(t, sys)
		})
	}
}

// goexitServer is a Server whose callback named in goexitIn calls
// runtime.Goexit; Terminate reports its reason on terminated, and calls
// Goexit itself if terminateGoexit is set.
type goexitServer struct {
	actor.ServerBase
	goexitIn        string
	terminateGoexit bool
	terminated      chan actor.Reason
}

func (s *goexitServer) maybe(where string) {
	if s.goexitIn == where {
		runtime.Goexit()
	}
}

func (s *goexitServer) Init(c *actor.Context) error {
	s.maybe("Init")
	return nil
}
func (s *goexitServer) HandleCall(c *actor.Context, req actor.Request) {
	s.maybe("HandleCall")
	if req.Msg == "stop" {
		c.Reply(req, "stopping")
		c.Stop(actor.Normal)
		return
	}
	c.Reply(req, req.Msg)
}
func (s *goexitServer) HandleCast(c *actor.Context, msg any) {
	if msg == "continue" {
		actor.ContinueAfter(c, "go")
		return
	}
	s.maybe("HandleCast")
}
func (s *goexitServer) HandleInfo(c *actor.Context, msg any) { s.maybe("HandleInfo") }
func (s *goexitServer) HandleContinue(c *actor.Context, arg any) {
	s.maybe("HandleContinue")
}
func (s *goexitServer) Terminate(c *actor.Context, reason actor.Reason) {
	if s.terminated != nil {
		s.terminated <- reason
	}
	if s.terminateGoexit {
		runtime.Goexit()
	}
}

// TestGoexitInServerInit: a Server whose Init calls Goexit fails its start
// at once with a *StartError carrying the Goexit reason (it timed out
// before), from outside and from an actor; its start name is free again
// and Terminate does not run.
func TestGoexitInServerInit(t *testing.T) {
	for _, scheds := range goexitScheds {
		t.Run(fmt.Sprintf("schedulers=%d", scheds), func(t *testing.T) {
			sys, reports := goexitSys(t, scheds)
			term := make(chan actor.Reason, 1)
			began := time.Now()
			_, err := actor.StartServer(sys, &goexitServer{goexitIn: "Init", terminated: term},
				actor.InitTimeout(20*time.Second), actor.WithSpawn(actor.Name("goexit-init")))
			var se *actor.StartError
			if !errors.As(err, &se) {
				t.Fatalf("StartServer: %v, want a *StartError", err)
			}
			if d := time.Since(began); d > 10*time.Second {
				t.Fatalf("the start failed after %v (an init timeout?)", d)
			}
			checkGoexitReason(t, "StartError", se.Reason)
			if !errors.Is(err, actor.ErrGoexit) {
				t.Fatalf("errors.Is(%v, ErrGoexit) is false", err)
			}
			if pid, ok := sys.Whereis("goexit-init"); ok {
				t.Fatalf("the start name is still held by %v", pid)
			}
			checkGoexitReason(t, "crash report", recv(t, reports).Reason)

			// From an actor: SpawnServer, linked; the trapping starter
			// gets the StartError and the link's Exit.
			out := make(chan any, 2)
			starter, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
				switch msg.(type) {
				case string:
					_, err := actor.SpawnServer(c, &goexitServer{goexitIn: "Init", terminated: term},
						actor.InitTimeout(20*time.Second), actor.WithSpawn(actor.Name("goexit-init")))
					out <- err
				case actor.Exit:
					out <- msg
				}
			}), actor.TrapExit())
			if err != nil {
				t.Fatal(err)
			}
			sys.Send(starter, "start")
			err, _ = recv(t, out).(error)
			if !errors.As(err, &se) {
				t.Fatalf("SpawnServer: %v, want a *StartError", err)
			}
			checkGoexitReason(t, "SpawnServer's StartError", se.Reason)
			ex, ok := recv(t, out).(actor.Exit)
			if !ok {
				t.Fatal("no Exit from the linked server")
			}
			checkGoexitReason(t, "Exit", ex.Reason)
			sys.Exit(starter, actor.Kill) // it traps exits: Shutdown's would not stop it
			select {
			case r := <-term:
				t.Fatalf("Terminate ran after a failed Init (reason %v)", r)
			default:
			}
			checkRuns(t, sys, 2*scheds)
			checkShutdown(t, sys)
		})
	}
}

// TestGoexitInServerCallbacks: a Goexit in HandleCall, HandleCast,
// HandleInfo or HandleContinue is a crash like a panic there: Terminate
// runs with the Goexit reason, the server exits with it, a pending call
// fails with it (not a timeout), the crash is reported once.
func TestGoexitInServerCallbacks(t *testing.T) {
	for _, scheds := range goexitScheds {
		for _, where := range []string{"HandleCall", "HandleCast", "HandleInfo", "HandleContinue"} {
			t.Run(fmt.Sprintf("schedulers=%d/%s", scheds, where), func(t *testing.T) {
				sys, reports := goexitSys(t, scheds)
				term := make(chan actor.Reason, 1)
				pid, err := actor.StartServer(sys, &goexitServer{goexitIn: where, terminated: term})
				if err != nil {
					t.Fatal(err)
				}
				w, _ := sys.Monitor(pid)
				switch where {
				case "HandleCall":
					_, err := sys.Call(pid, "hello", 10*time.Second)
					var ce *actor.CallExitError
					if !errors.As(err, &ce) {
						t.Fatalf("call: %v, want a *CallExitError", err)
					}
					checkGoexitReason(t, "call error", ce.Reason)
				case "HandleCast":
					actor.Cast(sys, pid, "hello")
				case "HandleContinue":
					actor.Cast(sys, pid, "continue")
				case "HandleInfo":
					sys.Send(pid, "hello")
				}
				checkGoexitReason(t, "Terminate", recv(t, term))
				checkGoexitReason(t, "Watch", awaitWatch(t, w, "server"))
				checkGoexitReason(t, "crash report", recv(t, reports).Reason)
				select {
				case r := <-reports:
					t.Fatalf("a second crash report: %v", r.Text)
				default:
				}
				checkRuns(t, sys, 2*scheds)
				checkShutdown(t, sys)
			})
		}
	}
}

// TestGoexitInTerminate: a Terminate that calls Goexit ends the server
// with the Goexit reason: after a Stop, after a Goexit in a callback, and
// when Shutdown stops a trapping server (Shutdown returns in time).
func TestGoexitInTerminate(t *testing.T) {
	for _, scheds := range goexitScheds {
		t.Run(fmt.Sprintf("schedulers=%d", scheds), func(t *testing.T) {
			sys, reports := goexitSys(t, scheds)
			// After a Stop.
			term := make(chan actor.Reason, 1)
			pid, err := actor.StartServer(sys, &goexitServer{terminateGoexit: true, terminated: term})
			if err != nil {
				t.Fatal(err)
			}
			w, _ := sys.Monitor(pid)
			if v, err := sys.Call(pid, "stop", 10*time.Second); err != nil || v != "stopping" {
				t.Fatalf("stop call: %v, %v", v, err)
			}
			if r := recv(t, term); r != actor.Normal {
				t.Fatalf("Terminate's reason %v, want normal", r)
			}
			checkGoexitReason(t, "Watch after Stop", awaitWatch(t, w, "server"))
			checkGoexitReason(t, "crash report", recv(t, reports).Reason)

			// After a Goexit in a callback: Goexit again, during the first.
			pid, err = actor.StartServer(sys, &goexitServer{goexitIn: "HandleCast", terminateGoexit: true, terminated: term})
			if err != nil {
				t.Fatal(err)
			}
			w, _ = sys.Monitor(pid)
			actor.Cast(sys, pid, "hello")
			checkGoexitReason(t, "Terminate", recv(t, term))
			checkGoexitReason(t, "Watch after a nested Goexit", awaitWatch(t, w, "server"))
			checkRuns(t, sys, 2*scheds)

			// Shutdown of a trapping server whose Terminate calls Goexit.
			pid, err = actor.StartServer(sys, &goexitServer{terminateGoexit: true, terminated: term},
				actor.WithSpawn(actor.TrapExit()))
			if err != nil {
				t.Fatal(err)
			}
			w, _ = sys.Monitor(pid)
			checkShutdown(t, sys)
			if r := recv(t, term); r != actor.Shutdown {
				t.Fatalf("Terminate's reason %v, want shutdown", r)
			}
			checkGoexitReason(t, "Watch after Shutdown", awaitWatch(t, w, "server"))
		})
	}
}
