package actor_test

import (
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
