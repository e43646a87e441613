package actor_test

// Found by a first-time user writing examples/chat on the public API.

import (
	"strings"
	"testing"

	"github.com/colonyrt/colony/actor"
)

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
func TestNewuserTerminateStopReportsExitReason(t *testing.T) {
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
