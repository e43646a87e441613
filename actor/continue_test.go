package actor_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// continuing's Init waits until a message has been queued to it by name,
// then returns Continue; it logs its callbacks.
type continuing struct {
	actor.ServerBase
	queued <-chan struct{}
	log    chan<- string
	panic  bool
}

func (s *continuing) Init(c *actor.Context) error {
	<-s.queued
	return actor.Continue("warm-up")
}

func (s *continuing) HandleContinue(c *actor.Context, arg any) {
	if s.panic {
		panic("continue boom")
	}
	s.log <- fmt.Sprint("continue ", arg)
}

func (s *continuing) HandleInfo(c *actor.Context, m any) { s.log <- fmt.Sprint("info ", m) }

func (s *continuing) Terminate(c *actor.Context, r actor.Reason) { s.log <- "terminate" }

// Init's Continue runs HandleContinue before any message, even one queued
// to the server's name while Init ran (handle_continue); a self-send from
// Init would come after it.
func TestContinueRunsBeforeQueuedMessages(t *testing.T) {
	sys := start(t, actor.Config{})
	queued := make(chan struct{})
	log := make(chan string, 4)
	started := make(chan error, 1)
	go func() {
		_, err := actor.StartServer(sys, &continuing{queued: queued, log: log}, actor.WithSpawn(actor.Name("warm")))
		started <- err
	}()
	eventually(t, 5*time.Second, "the server is named", func() bool { _, ok := sys.Whereis("warm"); return ok })
	if err := sys.SendName("warm", "early"); err != nil {
		t.Fatal(err)
	}
	close(queued)
	if err := recv(t, started); err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	if a, b := recv(t, log), recv(t, log); a != "continue warm-up" || b != "info early" {
		t.Fatalf("callbacks %q, %q; want the continue first, then the queued message", a, b)
	}
}

// A panic in HandleContinue ends the server through Terminate, as in any
// callback; a server without HandleContinue cannot return Continue.
func TestContinueFailures(t *testing.T) {
	sys := start(t, actor.Config{Logger: func(string, ...any) {}})
	queued := make(chan struct{})
	close(queued)
	log := make(chan string, 4)
	pid, err := actor.StartServer(sys, &continuing{queued: queued, log: log, panic: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := recv(t, log); got != "terminate" {
		t.Fatalf("after a panic in HandleContinue: %q, want terminate", got)
	}
	eventually(t, 5*time.Second, "the server exits", func() bool { return !sys.Alive(pid) })

	_, err = actor.StartServer(sys, noContinue{})
	var se *actor.StartError
	if !errors.As(err, &se) {
		t.Fatalf("Continue from a server without HandleContinue: %v, want a *StartError", err)
	}
}

type noContinue struct{ actor.ServerBase }

func (noContinue) Init(*actor.Context) error { return actor.Continue(1) }

// SpawnServer with NoLink (gen_server:start from a process): the starter
// learns Init's result, and its death leaves the server running; without
// NoLink the linked server dies with it.
func TestSpawnServerNoLink(t *testing.T) {
	sys := start(t, actor.Config{})
	start := func(opts ...actor.ServerOption) actor.Pid {
		started := make(chan actor.Pid, 1)
		starter := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			pid, err := actor.SpawnServer(c, &holder{}, opts...)
			if err != nil {
				t.Error(err)
			}
			started <- pid
			c.Stop(actor.Atom("starter_crashed"))
		}))
		sys.Send(starter, "go")
		return recv(t, started)
	}
	unlinked, linked := start(actor.NoLink()), start()
	eventually(t, 5*time.Second, "the linked server dies with its starter", func() bool { return !sys.Alive(linked) })
	if !sys.Alive(unlinked) {
		t.Fatal("the NoLink server died with its starter")
	}
	if v, err := actor.Call[string](sys, unlinked, "now", time.Second); v != "ok" || err != nil {
		t.Fatalf("the NoLink server after its starter's death: %v, %v", v, err)
	}
	info, _ := sys.Info(unlinked)
	if info.Links != 0 {
		t.Fatalf("the NoLink server has %d links", info.Links)
	}
}

// stopThenContinue's Init stops the server and also asks to continue: the
// stop wins, HandleContinue never runs.
type stopThenContinue struct {
	actor.ServerBase
	ran chan<- string
}

func (s *stopThenContinue) Init(c *actor.Context) error {
	c.Stop(actor.Normal)
	return actor.Continue(nil)
}

func (s *stopThenContinue) HandleContinue(*actor.Context, any) { s.ran <- "continue" }

func TestContinueAfterStopInInitDoesNotRun(t *testing.T) {
	sys := start(t, actor.Config{})
	ran := make(chan string, 1)
	pid, err := actor.StartServer(sys, &stopThenContinue{ran: ran})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the server stops", func() bool { return !sys.Alive(pid) })
	select {
	case <-ran:
		t.Fatal("HandleContinue ran after Init stopped the server")
	default:
	}
}

// chain's HandleCall asks to continue; its HandleContinue asks once more.
type chain struct {
	actor.ServerBase
	log chan<- string
}

func (s *chain) HandleCall(c *actor.Context, r actor.Request) {
	actor.ContinueAfter(c, "one")
	c.Reply(r, "ok")
	c.Send(c.Self(), "queued") // in the mailbox before the callback returns
}

func (s *chain) HandleContinue(c *actor.Context, arg any) {
	s.log <- fmt.Sprint("continue ", arg)
	if arg == "one" {
		actor.ContinueAfter(c, "two")
	}
}

func (s *chain) HandleInfo(c *actor.Context, m any) { s.log <- fmt.Sprint("info ", m) }

// ContinueAfter from a callback (handle_call's {continue, _}) runs
// HandleContinue before the next message, and chains; outside a Server it
// reports false.
func TestContinueAfterCallback(t *testing.T) {
	sys := start(t, actor.Config{})
	log := make(chan string, 4)
	pid, err := actor.StartServer(sys, &chain{log: log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Call(pid, "x", time.Second); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"continue one", "continue two", "info queued"} {
		if got := recv(t, log); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	res := make(chan bool, 1)
	plain := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) { res <- actor.ContinueAfter(c, 1) }))
	sys.Send(plain, "go")
	if recv(t, res) {
		t.Fatal("ContinueAfter in a plain actor reported true")
	}
}

// typedWarm is a TypedServer with HandleContinue: Typed's adapter passes
// Init's Continue through to it.
type typedWarm struct {
	actor.ServerBase
	warmed int
}

func (s *typedWarm) Init(*actor.Context) error                { return actor.Continue(7) }
func (s *typedWarm) HandleContinue(c *actor.Context, arg any) { s.warmed = arg.(int) }
func (s *typedWarm) HandleCall(c *actor.Context, _ get, from actor.ReplyTo[int]) {
	from.Reply(c, s.warmed)
}
func (s *typedWarm) HandleCast(*actor.Context, add) {}

func TestContinueTypedServer(t *testing.T) {
	sys := start(t, actor.Config{})
	pid, err := actor.StartServer(sys, actor.Typed[get, int, add](&typedWarm{}))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := (actor.ServerRef[get, int, add]{Pid: pid}).Call(sys, get{}, time.Second); n != 7 || err != nil {
		t.Fatalf("a Typed server's HandleContinue: %v, %v; want 7", n, err)
	}
}
