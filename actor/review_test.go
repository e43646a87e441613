package actor_test

// Bugs a review of calls and the gen_server layer found, each pinned here
// (every test failed before its fix).

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// A System.Call whose callStart fails after its monitor is placed (here: the
// callee's bounded mailbox is full and the callee is killed meanwhile) must
// not put its pooled done channel back with the finaliser's token still in
// it: the next System.Call on that channel wakes at once and returns
// (nil, nil) before its reply.
func TestReviewSystemCallDonePoolPoisoned(t *testing.T) {
	sys := start(t, actor.Config{})
	echo, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			c.Reply(r, "ok")
		}
	}))
	var bad atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40 && bad.Load() == 0; i++ {
				sleeping := make(chan struct{})
				victim, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
					close(sleeping)
					c.Sleep(time.Hour)
				}), actor.MailboxBound(1))
				sys.Send(victim, 1)
				<-sleeping
				// Full once 2 is queued. The victim records that it took 1
				// when it parks in Sleep (block.go, "Consumption is flushed
				// at block time"); until then 1 still fills the bound.
				for sys.Send(victim, 2) != nil {
					runtime.Gosched()
				}
				// The kill lands while the calls are under way: it is sent
				// after the first few refusals, from a goroutine of its own,
				// and the calls go on back to back until it has. (A killer
				// that first yielded i%64 times, beside four callers
				// retrying without pause, was starved for seconds under
				// -race.)
				killAt := i % 8
				for k := 0; ; k++ {
					if k == killAt {
						go sys.Exit(victim, actor.Kill)
					}
					_, err := sys.Call(victim, "x", time.Second)
					if !errors.Is(err, actor.ErrMailboxFull) {
						break
					}
				}
				v, err := sys.Call(echo, "q", 5*time.Second)
				if v != "ok" || err != nil {
					t.Errorf("iteration %d: call to echo: (%v, %v), want (ok, nil)", i, v, err)
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
}

type termPanics struct {
	actor.ServerBase
}

func (termPanics) HandleCall(c *actor.Context, r actor.Request) {
	c.Reply(r, "bye")
	c.Stop(actor.Atom("bye"))
}
func (termPanics) Terminate(c *actor.Context, r actor.Reason) { panic("terminate crashed") }

// A panic in Terminate becomes the exit reason (server.go's terminate says
// so; OTP's terminate crash does the same).
func TestReviewTerminatePanicIsExitReason(t *testing.T) {
	sys := start(t, actor.Config{})
	pid, err := actor.StartServer(sys, termPanics{})
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan actor.Reason, 1)
	ready := make(chan struct{})
	w, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch m := m.(type) {
		case string:
			c.Monitor(pid)
			close(ready)
		case actor.Down:
			ch <- m.Reason
			c.Stop(actor.Normal)
		}
	}))
	sys.Send(w, "go")
	<-ready
	v, err := sys.Call(pid, "q", time.Second)
	t.Logf("call: %v %v", v, err)
	r := recv(t, ch)
	if _, ok := r.(actor.Panic); !ok {
		t.Fatalf("exit reason %#v, want a Panic from Terminate", r)
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

// The init ack of SpawnServer is an ordinary Send, refused by a full bounded
// mailbox: the starter then waits out its whole InitTimeout (forever by
// default) although Init succeeded, and kills the server.
func TestReviewSpawnServerAckRefusedByBound(t *testing.T) {
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

// keeps holds each call unanswered and answers the kept one with an error
// when told to (a cast), reporting whether ReplyError took it.
type keeps struct {
	actor.ServerBase
	kept  actor.Request
	taken chan bool
}

func (s *keeps) HandleCall(c *actor.Context, r actor.Request) { s.kept = r }
func (s *keeps) HandleCast(c *actor.Context, _ any) {
	s.taken <- c.ReplyError(s.kept, errors.New("too late"))
}

// ReplyError to a call that has already ended (here: timed out) is a late
// reply as much as Reply is: Stats.LateReplies counts it (it did not).
func TestReviewLateReplyErrorCounted(t *testing.T) {
	sys := start(t, actor.Config{})
	s := &keeps{taken: make(chan bool, 1)}
	pid, err := actor.StartServer(sys, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Call(pid, "q", 5*time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("call: %v, want ErrTimeout", err)
	}
	actor.Cast(sys, pid, "answer now") // after the Request: same sender, in order
	if recv(t, s.taken) {
		t.Fatal("ReplyError took a reply to a call that had timed out")
	}
	if n := sys.Stats().LateReplies; n != 1 {
		t.Fatalf("Stats.LateReplies = %d after a late ReplyError, want 1", n)
	}
}

type initPanics struct{ actor.ServerBase }

func (initPanics) Init(*actor.Context) error { panic("init crashed") }

// A panic in Init is a crash like a panic in any other callback (OTP: the
// init's exception is re-raised and proc_lib writes a crash report): the
// System's Logger gets it, with its stack, once; the start still fails
// with the Panic as its reason. It was not logged at all.
func TestReviewInitPanicLogged(t *testing.T) {
	var sink logSink
	sys := start(t, actor.Config{Logger: sink.Log})
	_, err := actor.StartServer(sys, initPanics{})
	var se *actor.StartError
	if !errors.As(err, &se) {
		t.Fatalf("StartServer: %v, want a *StartError", err)
	}
	if p, ok := se.Reason.(actor.Panic); !ok || p.Value != "init crashed" {
		t.Fatalf("start error reason %#v, want the Panic", se.Reason)
	}
	// The report is written before the start fails (before the init ack),
	// so it is there now; wait for the server's death to see that no second
	// one follows.
	eventually(t, 10*time.Second, "the server's death", func() bool { return sys.Stats().Live == 0 })
	// One Logger call carries the report and its stack, so that concurrent
	// reports cannot interleave (they were two calls).
	logged := sink.All()
	var reports, stacks int
	for _, l := range logged {
		if strings.Contains(l, "exited") && strings.Contains(l, "init crashed") && strings.Contains(l, "review_test.go") {
			reports++
		}
		if strings.Contains(l, "review_test.go") {
			stacks++
		}
	}
	if reports != 1 || stacks != 1 {
		t.Fatalf("logged %q: want one crash report of the Init panic, its stack in the same entry", logged)
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

// A start confirmation that arrives after SpawnServer gave up (InitTimeout,
// or the server was killed during Init) must never reach the starter's code
// as the internal *startSync: neither its handler nor the match function of
// a selective Receive. It is dropped as a late reply (Stats.LateReplies);
// it used to reach the handler.
func TestReviewStaleStartAckDropped(t *testing.T) {
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
			openGate() // the orphaned Init returns and acks
			deadline := time.Now().Add(10 * time.Second)
			for sys.Stats().LateReplies == 0 {
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

// stopsWith stops with the Reason it is cast; its Terminate panics when cast
// "terminate panics".
type stopsWith struct{ actor.ServerBase }

func (stopsWith) HandleCast(c *actor.Context, m any) {
	if m == "terminate panics" {
		c.Stop(actor.Atom("bye"))
		return
	}
	c.Stop(m.(actor.Reason))
}

func (stopsWith) Terminate(c *actor.Context, r actor.Reason) {
	if r == actor.Atom("bye") {
		panic("terminate crashed")
	}
}

// A Server that stops with a reason other than normal or shutdown is
// reported through Config.Logger, as proc_lib reports a gen_server's
// abnormal exit; so is a panic in Terminate. Normal and shutdown stops are
// quiet.
func TestServerAbnormalStopLogged(t *testing.T) {
	var sink logSink
	sys := start(t, actor.Config{Logger: sink.Log})
	for _, m := range []any{actor.Normal, actor.Shutdown, actor.ShutdownWith{Reason: actor.Atom("x")}, actor.Atom("boom"), "terminate panics"} {
		pid, err := actor.StartServer(sys, stopsWith{})
		if err != nil {
			t.Fatal(err)
		}
		actor.Cast(sys, pid, m)
		eventually(t, 10*time.Second, "the server's death", func() bool { return !sys.Alive(pid) })
	}
	logged := sink.All()
	var boom, term, other int
	for _, l := range logged {
		switch {
		case strings.Contains(l, "exited: boom"):
			boom++
		case strings.Contains(l, "exited") && strings.Contains(l, "terminate crashed"):
			term++
		case strings.Contains(l, "exited"):
			other++
		}
	}
	if boom != 1 || term != 1 || other != 0 {
		t.Fatalf("logged %q: want one report for boom, one for the Terminate panic, none for normal or shutdown", logged)
	}
}

type keepsSignal struct {
	keeps
	got chan struct{}
}

func (s *keepsSignal) HandleCall(c *actor.Context, r actor.Request) {
	s.kept = r
	s.got <- struct{}{}
}

// A call whose caller was killed while it waited has ended, as one that
// timed out has: a reply to it is late (Reply reports false and
// Stats.LateReplies counts it). It was taken, as if the dead caller would
// read it.
func TestReviewReplyToKilledCallerIsLate(t *testing.T) {
	sys := start(t, actor.Config{})
	s := &keepsSignal{keeps: keeps{taken: make(chan bool, 1)}, got: make(chan struct{}, 1)}
	srv, err := actor.StartServer(sys, s)
	if err != nil {
		t.Fatal(err)
	}
	caller, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		c.Call(srv, "q", actor.Infinity)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Send(caller, "go"); err != nil {
		t.Fatal(err)
	}
	recv(t, s.got) // the Request is held: the caller waits
	if err := sys.Exit(caller, actor.Kill); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "caller dead", func() bool { return !sys.Alive(caller) })
	actor.Cast(sys, srv, "answer now")
	if recv(t, s.taken) {
		t.Fatal("ReplyError took a reply to a call whose caller was killed")
	}
	if n := sys.Stats().LateReplies; n != 1 {
		t.Fatalf("Stats.LateReplies = %d after a reply to a killed caller, want 1", n)
	}
}
