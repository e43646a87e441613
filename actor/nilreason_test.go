package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// A nil exit reason means Normal, wherever a reason is given: Stop(nil)
// exited normal while Exit(pid, nil) killed a non-trapping actor with
// reason nil, and a trapping one got Exit{Reason: nil}.

// echo answers every call with its message; it forwards Exit messages
// (when trapping) to exits.
func nilReasonEcho(exits chan<- actor.Exit) actor.ActorFunc {
	return func(c *actor.Context, msg any) {
		switch m := msg.(type) {
		case actor.Request:
			c.Reply(m, m.Msg)
		case actor.Exit:
			exits <- m
		}
	}
}

// checkAliveAfterNilExit fails unless pid survived its nil exit signal:
// a call made after the signal is answered (the signal came first, from
// the same sender), and the actor is Alive.
func checkAliveAfterNilExit(t *testing.T, sys *actor.System, pid actor.Pid, what string) {
	t.Helper()
	if v, err := sys.Call(pid, "ping", 10*time.Second); err != nil || v != "ping" {
		t.Fatalf("%s: a non-trapping actor sent Exit(pid, nil) died or hung: %v, %v", what, v, err)
	}
}

func TestNilExitReasonIsNormal(t *testing.T) {
	sys := start(t, actor.Config{})
	exits := make(chan actor.Exit, 4)

	// System.Exit to a non-trapping actor: ignored, as Normal is.
	plain, _ := sys.Spawn(nilReasonEcho(exits))
	if err := sys.Exit(plain, nil); err != nil {
		t.Fatal(err)
	}
	checkAliveAfterNilExit(t, sys, plain, "System.Exit")

	// System.Exit to a trapping actor: Exit{Reason: Normal}.
	trapping, _ := sys.Spawn(nilReasonEcho(exits), actor.TrapExit())
	if err := sys.Exit(trapping, nil); err != nil {
		t.Fatal(err)
	}
	if ex := recv(t, exits); ex.Reason != actor.Normal {
		t.Fatalf("System.Exit(trapping, nil) delivered Exit{Reason: %#v}, want normal", ex.Reason)
	}

	// Context.Exit, to both.
	done := make(chan error, 2)
	sender, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		done <- c.Exit(msg.(actor.Pid), nil)
	}))
	sys.Send(sender, plain)
	if err := recv(t, done); err != nil {
		t.Fatal(err)
	}
	checkAliveAfterNilExit(t, sys, plain, "Context.Exit")
	sys.Send(sender, trapping)
	if err := recv(t, done); err != nil {
		t.Fatal(err)
	}
	if ex := recv(t, exits); ex.Reason != actor.Normal || ex.From != sender {
		t.Fatalf("Context.Exit(trapping, nil) delivered %+v, want normal from %v", ex, sender)
	}
	sys.Exit(trapping, actor.Kill) // it ignores Exits: Shutdown's would not stop it

	// Context.Stop(nil): exits normal (it did already).
	stopper, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) { c.Stop(nil) }))
	w, _ := sys.Monitor(stopper)
	sys.Send(stopper, "stop")
	if r := awaitWatch(t, w, "Stop(nil)"); r != actor.Normal {
		t.Fatalf("Stop(nil) exited with %#v, want normal", r)
	}

	// Context.Exit(self, nil) of a non-trapping actor: as exit(self(),
	// normal), it exits normal.
	self, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) { c.Exit(c.Self(), nil) }))
	w, _ = sys.Monitor(self)
	sys.Send(self, "go")
	if r := awaitWatch(t, w, "Exit(self, nil)"); r != actor.Normal {
		t.Fatalf("Exit(self, nil) exited with %#v, want normal", r)
	}
}

// nilStopServer's Init stops with a nil reason.
type nilStopServer struct{ actor.ServerBase }

func (nilStopServer) Init(*actor.Context) error { return actor.Stop(nil) }

// TestNilStopReasonIsNormal: Init's Stop(nil) is Stop(Normal): the start
// fails with a *StartError whose Reason is normal (it was nil), and the
// server exits normal; StopReason(Stop(nil)) is Normal.
func TestNilStopReasonIsNormal(t *testing.T) {
	if r := actor.StopReason(actor.Stop(nil)); r != actor.Normal {
		t.Fatalf("StopReason(Stop(nil)) = %#v, want normal", r)
	}
	sys := start(t, actor.Config{})
	_, err := actor.StartServer(sys, nilStopServer{})
	var se *actor.StartError
	if !errors.As(err, &se) || se.Reason != actor.Normal {
		t.Fatalf("StartServer: %v (reason %#v), want a *StartError with reason normal", err, se)
	}
}
