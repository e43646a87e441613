package actor_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// counter is a TypedServer: calls are get, answered with int; casts are add.
type (
	add int
	get struct{}
)

type counter struct {
	actor.ServerBase
	n int
}

func (s *counter) HandleCall(c *actor.Context, _ get, from actor.ReplyTo[int]) { from.Reply(c, s.n) }
func (s *counter) HandleCast(c *actor.Context, m add)                          { s.n += int(m) }

func Example_server() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	pid, _ := actor.StartServer(sys, actor.Typed[get, int, add](&counter{}))
	ref := actor.ServerRef[get, int, add]{Pid: pid}
	ref.Cast(sys, 2)
	ref.Cast(sys, 40)
	n, err := ref.Call(sys, get{}, time.Second)
	fmt.Println(n, err)
	// Output: 42 <nil>
}

type initStop struct{ actor.ServerBase }

func (initStop) Init(*actor.Context) error { return actor.Stop(actor.Atom("boom")) }

func ExampleStop() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	_, err := actor.StartServer(sys, initStop{})
	var se *actor.StartError
	fmt.Println(errors.As(err, &se), se.Reason)
	// Output: true boom
}

// later keeps calls and answers them when a cast arrives (reply later).
type later struct {
	actor.ServerBase
	waiting []actor.Request
	stopped chan actor.Reason
}

func (s *later) Init(c *actor.Context) error                  { c.TrapExit(true); return nil }
func (s *later) HandleCall(c *actor.Context, r actor.Request) { s.waiting = append(s.waiting, r) }
func (s *later) HandleCast(c *actor.Context, msg any) {
	for _, r := range s.waiting {
		c.Reply(r, msg)
	}
	s.waiting = nil
}
func (s *later) Terminate(c *actor.Context, r actor.Reason) { s.stopped <- r }

func TestServerReplyLaterAndTerminateOnShutdown(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := &later{stopped: make(chan actor.Reason, 1)}
	pid, err := actor.StartServer(sys, s)
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan any, 1)
	go func() { v, _ := sys.Call(pid, "q", 10*time.Second); res <- v }()
	eventually(t, 5*time.Second, "the call taken", func() bool { info, _ := sys.Info(pid); return info.Handled > 0 })
	actor.Cast(sys, pid, "answer")
	if v := <-res; v != "answer" {
		t.Fatalf("got %v", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-s.stopped; r != actor.Reason(actor.Shutdown) {
		t.Fatalf("terminate reason %v", r)
	}
}

type slowInit struct{ actor.ServerBase }

func (slowInit) Init(c *actor.Context) error { c.Sleep(time.Second); return nil }

type ignoreInit struct{ actor.ServerBase }

func (ignoreInit) Init(*actor.Context) error { return actor.ErrIgnore }

type panicky struct {
	actor.ServerBase
	term chan actor.Reason
}

func (p panicky) HandleCast(*actor.Context, any)             { panic("oops") }
func (p panicky) Terminate(_ *actor.Context, r actor.Reason) { p.term <- r }

func TestServerInitResults(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown(context.Background())
	if _, err := actor.StartServer(sys, slowInit{}, actor.InitTimeout(20*time.Millisecond)); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("init timeout: %v", err)
	}
	if _, err := actor.StartServer(sys, ignoreInit{}); !errors.Is(err, actor.ErrIgnore) {
		t.Fatalf("ignore: %v", err)
	}
	p := panicky{term: make(chan actor.Reason, 1)}
	pid, err := actor.StartServer(sys, p)
	if err != nil {
		t.Fatal(err)
	}
	actor.Cast(sys, pid, 1)
	r := <-p.term
	if pr, ok := r.(actor.Panic); !ok || pr.Value != "oops" || pr.Stack == "" {
		t.Fatalf("terminate reason %#v", r)
	}
	// Calls from inside an actor: SpawnServer links and waits for Init.
	got := make(chan error, 1)
	starter, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		_, err := actor.SpawnServer(c, slowInit{}, actor.InitTimeout(10*time.Millisecond))
		got <- err
		c.Stop(actor.Normal)
	}))
	sys.Send(starter, "go")
	if err := <-got; !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("SpawnServer timeout: %v", err)
	}
}

// initAs is a Server whose Init stops with boom, ignores, panics or runs.
type initAs string

func (initAs) HandleCall(*actor.Context, actor.Request) {}
func (initAs) HandleCast(*actor.Context, any)           {}
func (initAs) HandleInfo(*actor.Context, any)           {}
func (initAs) Terminate(*actor.Context, actor.Reason)   {}
func (i initAs) Init(*actor.Context) error {
	switch i {
	case "stop":
		return actor.Stop(actor.Atom("boom"))
	case "ignore":
		return actor.ErrIgnore
	case "panic":
		panic("init panic")
	}
	return nil
}

// TestFailedNamedStartFreesName: a start with the Name spawn option whose
// Init fails or ignores has released the name when StartServer or
// SpawnServer returns, as OTP's gen does (it unregisters the name before
// proc_lib's init ack, so that an immediate restart cannot fail with
// already_started; tests/testdata/erlang/pg/start_fail_name). The name used
// to vanish only at the server's death, just after the ack: Whereis could
// still find the dying server and a new start with the name fail with
// ErrNameTaken.
func TestFailedNamedStartFreesName(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2, Logger: func(string, ...any) {}})
	const name = "svc"
	check := func(t *testing.T, how string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: the start succeeded", how)
		}
		if p, ok := sys.Whereis(name); ok {
			t.Fatalf("%s: %v; %q is still registered to %v", how, err, name, p)
		}
		pid, err := actor.StartServer(sys, initAs("run"), actor.WithSpawn(actor.Name(name)))
		if err != nil {
			t.Fatalf("%s: the next start with the name: %v", how, err)
		}
		sys.Exit(pid, actor.Kill) // the finaliser has run when Exit returns: the name is free
	}
	for _, init := range []initAs{"stop", "ignore", "panic"} {
		t.Run(string(init), func(t *testing.T) {
			for range 200 {
				_, err := actor.StartServer(sys, init, actor.WithSpawn(actor.Name(name)))
				check(t, "StartServer", err)
			}
			// SpawnServer from a trapping actor (the failed server's Exit
			// is a message there, not its death).
			errs := make(chan error)
			starter, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
				if msg == "go" {
					_, err := actor.SpawnServer(c, init, actor.WithSpawn(actor.Name(name)))
					errs <- err
				}
			}), actor.TrapExit())
			if err != nil {
				t.Fatal(err)
			}
			defer sys.Exit(starter, actor.Kill)
			for range 200 {
				sys.Send(starter, "go")
				check(t, "SpawnServer", <-errs)
			}
		})
	}
}

type fillsParent struct {
	actor.ServerBase
	parent actor.Pid
}

func (s *fillsParent) Init(c *actor.Context) error {
	c.Send(s.parent, "filler") // any message the parent's mailbox holds when the ack is sent
	return nil
}

// The init ack of SpawnServer reaches a starter whose bounded mailbox is
// full, as Down and Exit do: refused like an ordinary Send, it would leave
// the starter waiting out its whole InitTimeout (forever by default)
// although Init succeeded, and then killing the server.
func TestSpawnServerAckPassesStarterBound(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	res := make(chan error, 1)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if m != "go" {
			return
		}
		_, err := actor.SpawnServer(c, &fillsParent{parent: c.Self()}, actor.InitTimeout(time.Second))
		res <- err
	}), actor.MailboxBound(1))
	sys.Send(pid, "go")
	if err := recv(t, res); err != nil {
		t.Fatalf("SpawnServer: %v (Init succeeded)", err)
	}
}

// gatedInit's Init reports its pid, then blocks outside the runtime until
// the gate opens, so that it outlives its starter's patience (the starter
// gives up and kills it, and the orphaned Init then returns and acks).
type gatedInit struct {
	actor.ServerBase
	self chan actor.Pid
	gate chan struct{}
}

func (s *gatedInit) Init(c *actor.Context) error {
	s.self <- c.Self()
	<-s.gate
	return nil
}

// A start confirmation after SpawnServer gave up (InitTimeout, or the
// server was killed during Init) must never reach the starter's code as the
// internal *startSync: neither its handler nor the match function of a
// selective Receive. The killed server's orphaned Init acks nothing (its
// ack is dropped at the source, Stats.Orphaned); an ack sent before the
// kill would be dropped by the starter as a late reply (LateReplies).
func TestStaleStartAckDropped(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout bool // give up on InitTimeout; else the server is killed
		receive bool // the ack arrives while the starter is in a Receive
	}{
		{"timeout", true, false},
		{"killed", false, false},
		{"timeout/receive", true, true},
		{"killed/receive", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := start(t, actor.Config{})
			srv := &gatedInit{self: make(chan actor.Pid, 1), gate: make(chan struct{})}
			var open sync.Once
			openGate := func() { open.Do(func() { close(srv.gate) }) }
			t.Cleanup(openGate) // before Shutdown (cleanups run last first)
			opts := []actor.ServerOption{}
			if tc.timeout {
				opts = append(opts, actor.InitTimeout(5*time.Millisecond))
			}
			started := make(chan error, 1)
			received := make(chan any, 1)
			leaked := make(chan string, 16)
			// Anything but the test's strings and the link's Exit (the
			// starter traps exits to outlive the kill) is a leak.
			leak := func(where string, m any) {
				switch m.(type) {
				case string, actor.Exit:
					return
				}
				select {
				case leaked <- fmt.Sprintf("%s as %T", where, m):
				default:
				}
			}
			shutdown := func(m any) bool {
				x, ok := m.(actor.Exit)
				return ok && x.Reason == actor.Reason(actor.Shutdown)
			}
			starter, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
				switch m {
				case "go":
					c.TrapExit(true)
					_, err := actor.SpawnServer(c, srv, opts...)
					started <- err
					return
				case "receive":
					v, _ := c.Receive(func(m any) bool {
						leak("the match function of its Receive", m)
						return m == "marker" || shutdown(m)
					}, actor.Infinity)
					if shutdown(v) {
						c.Stop(actor.Shutdown)
					}
					received <- v
					return
				}
				if shutdown(m) {
					c.Stop(actor.Shutdown) // trapping: end with Shutdown's signal
				}
				leak("its handler", m)
			}))
			sys.Send(starter, "go")
			server := recv(t, srv.self)
			if !tc.timeout {
				sys.Exit(server, actor.Kill)
			}
			var se *actor.StartError
			if err := recv(t, started); !errors.As(err, &se) {
				t.Fatalf("SpawnServer: %v, want a *StartError", err)
			}
			if tc.receive {
				// Queued before the ack (which follows the gate's opening),
				// so the starter is in its Receive when the ack arrives.
				sys.Send(starter, "receive")
			}
			openGate() // the orphaned Init returns, and its ack is dropped
			deadline := time.Now().Add(10 * time.Second)
			for st := sys.Stats(); st.Orphaned+st.LateReplies == 0; st = sys.Stats() {
				select {
				case m := <-leaked:
					t.Fatalf("a stale start ack reached %s", m)
				case <-time.After(time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatal("the stale start ack was neither dropped nor counted")
				}
			}
			if tc.receive {
				sys.Send(starter, "marker")
				if v := recv(t, received); v != "marker" {
					t.Fatalf("Receive returned %v", v)
				}
			}
			select {
			case m := <-leaked:
				t.Fatalf("a stale start ack reached %s", m)
			default:
			}
		})
	}
}
