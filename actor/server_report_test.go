package actor_test

// Crash reports of the Server behaviour: which exits are reported (an Init
// that fails or panics, an abnormal stop) and which are not (the callbacks
// of a server that was killed).

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testlog"
)

// logSink collects Config.Logger's lines.
type logSink struct{ testlog.Sink }

// reports returns the crash report lines ("actor <pid> exited: ...").
func (l *logSink) reports() []string { return l.Matching(" exited: ") }

// initFails's Init returns err.
type initFails struct {
	actor.ServerBase
	err error
}

func (s initFails) Init(*actor.Context) error { return s.err }

// A Server whose Init fails with a reason other than normal or shutdown
// stops with that reason, and is reported, as OTP 25's proc_lib writes a
// crash report for init's {stop, Reason} (gen_server:init_it exits with
// Reason) and Config.Logger promises for every Server that stops
// abnormally; an Init that ignores, or stops with normal or shutdown, is
// quiet. It was not reported.
func TestInitErrorReported(t *testing.T) {
	var l logSink
	sys := start(t, actor.Config{Logger: l.Log})
	for _, tc := range []struct {
		err    error
		report bool
	}{
		{actor.ErrIgnore, false},
		{actor.Stop(actor.Normal), false},
		{actor.Stop(actor.Shutdown), false},
		{actor.Stop(actor.ShutdownWith{Reason: actor.Atom("x")}), false},
		{actor.Stop(actor.Atom("boom")), true},
		{errors.New("init said no"), true},
	} {
		before := len(l.reports())
		if _, err := actor.StartServer(sys, initFails{err: tc.err}); err == nil {
			t.Fatalf("StartServer with Init error %v succeeded", tc.err)
		}
		// Written before the ack, as an Init panic's report is.
		got := len(l.reports()) - before
		want := 0
		if tc.report {
			want = 1
		}
		if got != want {
			t.Errorf("Init error %v: %d crash reports, want %d (%q)", tc.err, got, want, l.reports())
		}
	}
	eventually(t, 10*time.Second, "the servers' deaths", func() bool { return sys.Stats().Live == 0 })
	if r := l.reports(); len(r) != 2 {
		t.Fatalf("reports %q: want one for each abnormal Init error", r)
	}
}

// blockedServer's HandleCast reports that it runs, blocks outside the
// runtime until the gate opens, and then does what it was cast: stops with
// a reason, or panics.
type blockedServer struct {
	actor.ServerBase
	in    chan struct{}
	gate  chan struct{}
	terms chan actor.Reason
}

func (s *blockedServer) Terminate(c *actor.Context, r actor.Reason) {
	if s.terms != nil {
		s.terms <- r
	}
}

func (s *blockedServer) HandleCast(c *actor.Context, m any) {
	s.in <- struct{}{}
	<-s.gate
	if m == "panic" {
		panic("after the kill")
	}
	c.Stop(actor.Atom("boom"))
}

// A Server killed while a callback runs (a supervisor's brutal kill, or its
// kill after a shutdown timeout) exits with reason killed, which is not
// reported; what its orphaned callback then does is dropped, as for any
// actor (worker.crashed logs a panic only of an actor still alive). A stop
// or a panic of that orphaned callback was reported as the server's exit,
// with a reason it did not exit with; and it ran Terminate, which a kill
// never does (the Server contract, as OTP's).
func TestOrphanedServerCallbackNotReported(t *testing.T) {
	for _, what := range []string{"stop", "panic"} {
		t.Run(what, func(t *testing.T) {
			var l logSink
			sys := start(t, actor.Config{Logger: l.Log})
			s := &blockedServer{in: make(chan struct{}), gate: make(chan struct{}), terms: make(chan actor.Reason, 1)}
			pid, err := actor.StartServer(sys, s)
			if err != nil {
				t.Fatal(err)
			}
			downs := make(chan actor.Down, 1)
			watching := make(chan struct{})
			watcher, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
				switch m := m.(type) {
				case actor.Pid:
					c.Monitor(m)
					close(watching)
				case actor.Down:
					downs <- m
				}
			}))
			sys.Send(watcher, pid)
			recv(t, watching) // the monitor is in place before the kill
			actor.Cast(sys, pid, what)
			recv(t, s.in)
			sys.Exit(pid, actor.Kill)
			close(s.gate) // the orphaned callback goes on
			if d := recv(t, downs); d.Reason != actor.Reason(actor.Killed) {
				t.Fatalf("the server exited with %v, want killed", d.Reason)
			}
			eventually(t, 10*time.Second, "the server's slot", func() bool { return sys.Stats().Live == 1 })
			if r := l.reports(); len(r) != 0 {
				t.Fatalf("a killed server was reported: %q", r)
			}
			select {
			case r := <-s.terms:
				t.Fatalf("a killed server ran Terminate(%v)", r)
			default:
			}
		})
	}
}

// gatedInitPanic's Init blocks outside the runtime until the gate opens, and
// then panics.
type gatedInitPanic struct {
	actor.ServerBase
	gate chan struct{}
}

func (s gatedInitPanic) Init(*actor.Context) error {
	<-s.gate
	panic("after the kill")
}

// The same for Init: a start that times out kills the server (gen:start's
// kill); an Init that then panics belongs to a server that exited killed,
// and is not reported.
func TestOrphanedInitNotReported(t *testing.T) {
	var l logSink
	sys := start(t, actor.Config{Logger: l.Log})
	s := gatedInitPanic{gate: make(chan struct{})}
	_, err := actor.StartServer(sys, s, actor.InitTimeout(5*time.Millisecond))
	if !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("StartServer: %v, want the init timeout", err)
	}
	close(s.gate)
	eventually(t, 10*time.Second, "the server's slot", func() bool { return sys.Stats().Live == 0 })
	if r := l.reports(); len(r) != 0 {
		t.Fatalf("a server killed during Init was reported: %q", r)
	}
}

type initPanics struct{ actor.ServerBase }

func (initPanics) Init(*actor.Context) error { panic("init crashed") }

// A panic in Init is a crash like a panic in any other callback (OTP: the
// init's exception is re-raised and proc_lib writes a crash report): the
// System's Logger gets it, with its stack, once; the start still fails
// with the Panic as its reason. It was not logged at all.
func TestInitPanicReported(t *testing.T) {
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
		if strings.Contains(l, "exited") && strings.Contains(l, "init crashed") && strings.Contains(l, "server_report_test.go") {
			reports++
		}
		if strings.Contains(l, "server_report_test.go") {
			stacks++
		}
	}
	if reports != 1 || stacks != 1 {
		t.Fatalf("logged %q: want one crash report of the Init panic, its stack in the same entry", logged)
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
	c.Stop(m)
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
func TestServerAbnormalStopReported(t *testing.T) {
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
