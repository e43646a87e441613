package pool_test

import (
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testlog"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/pool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startSys(t testing.TB) (*actor.System, *testlog.Sink) {
	t.Helper()
	logs := &testlog.Sink{}
	return testsys.Start(t, actor.Config{Logger: logs.Log}), logs
}

func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}

// Requests a test worker answers.
type (
	who   struct{}                        // its pid
	hold  struct{ d time.Duration }       // answer after d
	crash struct{}                        // panic
	keep  struct{ kept chan<- actor.Pid } // keep the request; answer it on release
)

type release struct{}

// worker is a test worker: a Server that answers who, hold and crash.
type worker struct {
	actor.ServerBase
	casts chan<- actor.Pid // each cast received: its pid
	kept  []actor.Request
}

type later struct{ req actor.Request }

func (w *worker) HandleCall(c *actor.Context, req actor.Request) {
	switch m := req.Msg.(type) {
	case who:
		c.Reply(req, c.Self())
	case hold:
		c.SendAfter(c.Self(), later{req}, m.d)
	case keep:
		w.kept = append(w.kept, req)
		m.kept <- c.Self()
	case crash:
		panic("crash asked")
	default:
		c.ReplyError(req, fmt.Errorf("worker: %T", m))
	}
}

func (w *worker) HandleCast(c *actor.Context, msg any) {
	if w.casts != nil {
		w.casts <- c.Self()
	}
}

func (w *worker) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case later:
		c.Reply(m.req, c.Self())
	case release:
		for _, req := range w.kept {
			c.Reply(req, c.Self())
		}
		w.kept = nil
	}
}

func startWorker(c *actor.Context) (actor.Pid, error) { return actor.SpawnServer(c, &worker{}) }

func startCasting(casts chan<- actor.Pid) pool.StartFunc {
	return func(c *actor.Context) (actor.Pid, error) { return actor.SpawnServer(c, &worker{casts: casts}) }
}

func startPool(t testing.TB, sys *actor.System, opts ...pool.Option) *pool.Pool {
	t.Helper()
	p, err := pool.Start(sys, startWorker, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
