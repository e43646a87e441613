package actor_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestBlockingGoexitInF: an f that ends by runtime.Goexit (a t.Fatal in
// it, say) did not return, and Blocking must not say it did: its result
// was (nil, nil), as if f had returned them. It is raised in the handler
// as a panic that says so.
func TestBlockingGoexitInF(t *testing.T) {
	sys := start(t, actor.Config{Logger: func(string, ...any) {}})
	type result struct {
		v   any
		err error
	}
	res := make(chan result, 1)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		v, err := c.Blocking(func() (any, error) { runtime.Goexit(); return "unreached", nil }, 5*time.Second)
		res <- result{v, err}
	}))
	w, err := sys.Monitor(pid)
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "go")
	select {
	case r := <-res:
		t.Fatalf("Blocking whose f called runtime.Goexit returned (%v, %v)", r.v, r.err)
	case <-w.Done():
		p, ok := w.Reason().(actor.Panic)
		if !ok || !strings.Contains(fmt.Sprint(p.Value), "Goexit") {
			t.Fatalf("exit reason %#v, want a panic naming runtime.Goexit", w.Reason())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no result and no exit")
	}
}

// TestBlockingOutlivesShutdown: Shutdown does not wait for an f still
// running (it cannot be interrupted; docs/guarantees.md says so), and f's
// result, coming after Shutdown has returned, is dropped without harm.
func TestBlockingOutlivesShutdown(t *testing.T) {
	sys := start(t, actor.Config{})
	release, started, fDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		c.Blocking(func() (any, error) {
			defer close(fDone)
			close(started)
			<-release
			return "late", nil
		}, actor.Infinity)
	}))
	sys.Send(pid, "go")
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with f still running: %v", err)
	}
	if sys.Alive(pid) {
		t.Fatal("the actor outlived Shutdown")
	}
	close(release)
	<-fDone
}
