package actor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

type slowReq struct{}

// A call that times out says which call: the callee's name and pid, the
// request's type and the timeout ("actor: timeout" alone named nothing).
func TestCallTimeoutNamesTheCall(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	mute, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("mute"))
	check := func(how string, err error, after time.Duration) {
		t.Helper()
		var te *actor.CallTimeoutError
		if !errors.As(err, &te) || !errors.Is(err, actor.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: %v", how, err)
		}
		if te.Pid != mute || te.Name != "mute" || te.Request != "actor_test.slowReq" || te.After != after {
			t.Fatalf("%s: %+v", how, te)
		}
		for _, want := range []string{"mute", mute.String(), "actor_test.slowReq"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: %q does not name %q", how, err, want)
			}
		}
	}
	_, err := sys.Call(mute, slowReq{}, 20*time.Millisecond)
	check("System.Call", err, 20*time.Millisecond)
	_, err = sys.CallName("mute", slowReq{}, 20*time.Millisecond)
	check("System.CallName", err, 20*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = sys.CallContext(ctx, mute, slowReq{})
	check("CallContext", err, 0)
	res := make(chan error, 1)
	caller, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		_, err := c.Call(mute, slowReq{}, 20*time.Millisecond)
		res <- err
	}))
	sys.Send(caller, "go")
	check("Context.Call", recv(t, res), 20*time.Millisecond)
	// Other errors are unchanged.
	if _, err := sys.Call(actor.Pid{}, slowReq{}, time.Second); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("zero pid: %v", err)
	}
}
