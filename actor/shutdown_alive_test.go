package actor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// ignoresExit traps exits and does nothing with them.
type ignoresExit struct{}

func (*ignoresExit) Receive(*actor.Context, any) {}

// hangsOnExit traps exits and, told to exit, waits in a Receive for a
// message that never comes.
type hangsOnExit struct{}

func (*hangsOnExit) Receive(c *actor.Context, m any) {
	if _, ok := m.(actor.Exit); ok {
		c.Receive(func(any) bool { return false }, actor.Infinity)
	}
}

// hangingServer is a Server that traps exits (Init), so that Shutdown's
// signal runs its Terminate, which then never returns.
type hangingServer struct{ actor.ServerBase }

func (*hangingServer) Init(c *actor.Context) error {
	c.TrapExit(true)
	return nil
}

func (*hangingServer) Terminate(c *actor.Context, _ actor.Reason) {
	c.Receive(func(any) bool { return false }, actor.Infinity)
}

// shutdownFails shuts sys down with a short ctx and returns its error,
// which must wrap context.DeadlineExceeded.
func shutdownFails(t *testing.T, sys *actor.System) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := sys.Shutdown(ctx)
	t.Logf("Shutdown: %v", err)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with an actor that ignores it: %v, want an error that is context.DeadlineExceeded", err)
	}
	return err
}

// The root Shutdown waited for is named first: pid, registered name,
// behaviour type, that it traps exits, and that it sat idle.
func TestShutdownLeftAliveNamesTheRootItWaitedFor(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pid := mustSpawn(t, sys, &ignoresExit{}, actor.TrapExit(), actor.Name("deaf"))
	msg := shutdownFails(t, sys).Error()
	want := fmt.Sprintf(`with 1 actor still alive: waited for %v "deaf" *actor_test.ignoresExit (traps exits; idle, or in a selective Receive)`, pid)
	if !strings.Contains(msg, want) {
		t.Fatalf("Shutdown's error:\n%s\nwant it to contain\n%s", msg, want)
	}
}

// A handler that blocked after Shutdown began is found by its stack: the
// error names the runtime call it waits in and the handler that called it.
func TestShutdownLeftAliveSaysWhereAHandlerIsBlocked(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pid := mustSpawn(t, sys, &hangsOnExit{}, actor.TrapExit())
	msg := shutdownFails(t, sys).Error()
	want := fmt.Sprintf("waited for %v *actor_test.hangsOnExit (traps exits; blocked in actor.(*Context).Receive, called from actor_test.(*hangsOnExit).Receive (shutdown_alive_test.go:", pid)
	if !strings.Contains(msg, want) {
		t.Fatalf("Shutdown's error:\n%s\nwant it to contain\n%s", msg, want)
	}
}

// A Server is named by its own type, not by the runtime's wrapper.
func TestShutdownLeftAliveNamesAServerByItsType(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := actor.StartServer(sys, &hangingServer{})
	if err != nil {
		t.Fatal(err)
	}
	msg := shutdownFails(t, sys).Error()
	if want := fmt.Sprintf("waited for %v *actor_test.hangingServer (traps exits; blocked in actor.(*Context).Receive, called from actor_test.(*hangingServer).Terminate (shutdown_alive_test.go:", pid); !strings.Contains(msg, want) {
		t.Fatalf("Shutdown's error:\n%s\nwant it to contain\n%s", msg, want)
	}
}

// With many actors left, the error names a few and counts the rest, and
// its length stays bounded whatever the names.
func TestShutdownLeftAliveListIsBounded(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		mustSpawn(t, sys, &ignoresExit{}, actor.TrapExit(), actor.Name(fmt.Sprint(i, strings.Repeat("x", 500))))
	}
	msg := shutdownFails(t, sys).Error()
	if want := fmt.Sprintf("with %d actors still alive: waited for ", n); !strings.Contains(msg, want) {
		t.Fatalf("Shutdown's error:\n%s\nwant it to contain %q", msg, want)
	}
	if want := fmt.Sprintf("; and %d more", n-5); !strings.HasSuffix(msg, want) {
		t.Fatalf("Shutdown's error:\n%s\nwant it to end %q", msg, want)
	}
	if len(msg) > 2000 {
		t.Fatalf("Shutdown's error is %d bytes long:\n%s", len(msg), msg)
	}
}
