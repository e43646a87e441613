package colonytest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

// TestBlockingIsRefused: Context.Blocking would run f on a goroutine the
// mode cannot schedule; it fails with ErrNondeterministic and runs nothing.
func TestBlockingIsRefused(t *testing.T) {
	colonytest.Run(t, 1, func(t *testing.T, sys *actor.System) {
		ran := false
		pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if m, ok := msg.(actor.Request); ok {
				_, err := c.Blocking(func() (any, error) { ran = true; return nil, nil }, time.Second)
				c.Reply(m, err)
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		v, err := sys.Call(pid, "go", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err, _ := v.(error); !errors.Is(err, actor.ErrNondeterministic) || ran {
			t.Fatalf("Blocking = %v (f ran: %v), want ErrNondeterministic", v, ran)
		}
	})
}

// TestHelperIsRefused: System.Helper (io's poller) panics with a message
// that names the mode.
func TestHelperIsRefused(t *testing.T) {
	colonytest.Run(t, 1, func(t *testing.T, sys *actor.System) {
		defer func() {
			r := recover()
			if s, _ := r.(string); !strings.Contains(s, "deterministic test mode") {
				t.Fatalf("Helper: recovered %v, want the mode's refusal", r)
			}
		}()
		sys.Helper()
	})
}
