package actor_test

// A Server's Terminate: what a Stop or a panic there does to the exit
// reason and to the crash report.

import (
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// calmer crashes (or stops with "bye") when told to; its Terminate then
// stops it with the reason it was given, normal or shutdown.
type calmer struct {
	actor.ServerBase
	to actor.Reason
}

func (calmer) HandleInfo(c *actor.Context, m any) {
	if m == "panic" {
		panic("boom")
	}
	c.Stop(actor.Atom("bye"))
}

func (s calmer) Terminate(c *actor.Context, _ actor.Reason) { c.Stop(s.to) }

// A handler's panic is reported even when Terminate then stops the server
// with shutdown (Config.Logger: "one for every handler panic"), and so is
// an abnormal stop that Terminate turned into a clean one (OTP's gen_server
// reports a terminate/2 that exits, whatever its reason). Since the report
// moved after Terminate, the new reason decided alone: a crash whose
// Terminate stopped with shutdown left no trace.
func TestPanicReportedWhenTerminateStopsShutdown(t *testing.T) {
	testTerminateStopsCleanly(t, actor.Shutdown)
}

// testTerminateStopsCleanly checks that a server that panics, or stops
// with "bye", and whose Terminate then stops it with to, exits with to and
// is reported once, with the reason it replaced.
func testTerminateStopsCleanly(t *testing.T, to actor.Reason) {
	var l logSink
	sys := start(t, actor.Config{Logger: l.Log})
	{
		for _, how := range []string{"panic", "stop"} {
			pid, err := actor.StartServer(sys, calmer{to: to})
			if err != nil {
				t.Fatal(err)
			}
			w, err := sys.Monitor(pid)
			if err != nil {
				t.Fatal(err)
			}
			before := len(l.reports())
			sys.Send(pid, how)
			recv(t, w.Done())
			if w.Reason() != to {
				t.Errorf("%s, Terminate stops %v: exited with %v", how, to, w.Reason())
			}
			want := map[string]string{"panic": "boom", "stop": "bye"}[how]
			r := l.reports()[before:]
			if len(r) != 1 || !strings.Contains(r[0], want) {
				t.Errorf("%s, Terminate stops %v: reports %q, want one naming %q", how, to, r, want)
			}
			if how == "panic" && len(r) == 1 && !strings.Contains(r[0], "HandleInfo") {
				t.Errorf("Terminate stops %v: the report %q lacks the panic's stack", to, r[0])
			}
		}
	}
}

// A Stop(Normal) in Terminate changes the reason the server exits with, as
// Server's doc promises for a Stop in Terminate (terminate/2 exiting
// normal): it left the earlier reason in place, because Stop(Normal) did
// not overwrite a reason an earlier Stop had set. The crash it replaced is
// still reported.
func TestStopNormalInTerminateChangesReason(t *testing.T) {
	testTerminateStopsCleanly(t, actor.Normal)
}

// The last Stop of a handler decides its exit reason, Normal included.
func TestLastStopWins(t *testing.T) {
	sys := start(t, actor.Config{})
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		c.Stop(actor.Atom("first"))
		c.Stop(actor.Normal)
	}))
	if err != nil {
		t.Fatal(err)
	}
	w, err := sys.Monitor(pid)
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "go")
	recv(t, w.Done())
	if w.Reason() != actor.Normal {
		t.Errorf("exited with %v, want normal (the last Stop's)", w.Reason())
	}
}

// crashTwice panics in HandleInfo, and again in Terminate.
type crashTwice struct{ actor.ServerBase }

func (crashTwice) HandleInfo(*actor.Context, any)         { panic("boom") }
func (crashTwice) Terminate(*actor.Context, actor.Reason) { panic("terminate crashed") }

// A handler's panic is reported, with its stack, when Terminate then
// panics too: the server exits with Terminate's panic, and the report keeps
// the one it replaced, as for a Stop in Terminate (finish's doc). Since the
// report moved after Terminate, only Terminate's panic was reported: the
// crash that started it all left no trace.
func TestPanicReportedWhenTerminatePanics(t *testing.T) {
	var l logSink
	sys := start(t, actor.Config{Logger: l.Log})
	pid, err := actor.StartServer(sys, crashTwice{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sys.Monitor(pid)
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "go")
	recv(t, w.Done())
	if p, ok := w.Reason().(actor.Panic); !ok || p.Value != "terminate crashed" {
		t.Errorf("exited with %v, want Terminate's panic", w.Reason())
	}
	all := strings.Join(l.reports(), "\n")
	for _, want := range []string{"terminate crashed", "boom", "HandleInfo", ".Terminate"} {
		if !strings.Contains(all, want) {
			t.Errorf("the reports %q lack %q", all, want)
		}
	}
}

// restopper stops with "bye" (or panics) when told to; its Terminate then
// stops it again, with "changed".
type restopper struct{ actor.ServerBase }

func (restopper) HandleInfo(c *actor.Context, m any) {
	if m == "panic" {
		panic("boom")
	}
	c.Stop(actor.Atom("bye"))
}

func (restopper) Terminate(c *actor.Context, _ actor.Reason) { c.Stop(actor.Atom("changed")) }

// A Stop in Terminate changes the reason the Server exits with (its
// monitors, links and supervisor see "changed", as OTP's gen_server exits
// with the reason terminate/2 exits with), and the crash report written
// through Config.Logger names it too, as OTP's (gen_server:terminate calls
// error_info with terminate's reason); it named the reason the server was
// stopping with ("bye", or the panic), which it now keeps after the exit
// line.
func TestStopInTerminateIsTheReportedExitReason(t *testing.T) {
	var l logSink
	sys := start(t, actor.Config{Logger: l.Log})
	for _, how := range []string{"stop", "panic"} {
		pid, err := actor.StartServer(sys, restopper{})
		if err != nil {
			t.Fatal(err)
		}
		downs, watching := make(chan actor.Reason, 1), make(chan struct{})
		w, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
			switch m := m.(type) {
			case actor.Pid:
				c.Monitor(m)
				close(watching)
			case actor.Down:
				downs <- m.Reason
				c.Stop(actor.Normal)
			}
		}))
		sys.Send(w, pid)
		<-watching
		before := len(l.reports())
		sys.Send(pid, how)
		reason := recv(t, downs)
		if reason != actor.Atom("changed") {
			t.Errorf("%s: exited with %v, want changed", how, reason)
		}
		r := l.reports()[before:]
		if len(r) != 1 || !strings.Contains(r[0], "exited: changed") {
			t.Errorf("%s: exited with %v, reported %q", how, reason, r)
			continue
		}
		// The reason Terminate replaced is kept: "bye", or the panic with
		// its stack.
		if want := map[string]string{"stop": "stopping with: bye", "panic": "stopping with: actor panicked: boom"}[how]; !strings.Contains(r[0], want) {
			t.Errorf("%s: the report %q lacks %q", how, r[0], want)
		}
		if how == "panic" && !strings.Contains(r[0], "HandleInfo") {
			t.Errorf("panic: the report %q lacks the panic's stack", r[0])
		}
	}
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
func TestTerminatePanicIsExitReason(t *testing.T) {
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
