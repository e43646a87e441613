package supervisor_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// soak is set by COLONY_SOAK (.ci/run sets it): the soak-sized loops then
// run at their full size.
var soak = os.Getenv("COLONY_SOAK") != ""

func newSys(t *testing.T) *actor.System {
	t.Helper()
	return testsys.Start(t, actor.Config{Schedulers: 4})
}

type idleServer struct{ actor.ServerBase }

// stopper stops with the reason cast to it.
type stopper struct{ actor.ServerBase }

func (stopper) HandleCast(c *actor.Context, msg any) { c.Stop(msg) }

// lockedBuf is a bytes.Buffer safe for the concurrent writes of a slog handler.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) string() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuf) records(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad JSON record %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

type crashOnBoom struct{ actor.ServerBase }

func (crashOnBoom) HandleCast(c *actor.Context, msg any) {
	if msg == "boom" {
		panic("loop boom")
	}
}

// slowStopWorker traps exits and, in Terminate, prints its stop and then waits
// stopFor (in the runtime, so a kill can end it).
type slowStopWorker struct {
	actor.ServerBase
	id      string
	stopFor time.Duration
	out     func(string)
}

func (w *slowStopWorker) Init(c *actor.Context) error {
	c.TrapExit(true)
	w.out("started " + w.id)
	return nil
}

func (w *slowStopWorker) Terminate(c *actor.Context, r actor.Reason) {
	w.out(fmt.Sprintf("stopping %s %v", w.id, r))
	if w.stopFor > 0 {
		c.Sleep(w.stopFor)
	}
	w.out("stopped " + w.id)
}

func serviceTree(out func(string), slow time.Duration) supervisor.Spec {
	kid := func(id string, stopFor, shutdown time.Duration) supervisor.ChildSpec {
		return supervisor.ChildSpec{ID: id, Shutdown: shutdown, Start: supervisor.ServerStart(func(...any) actor.Server {
			return &slowStopWorker{id: id, stopFor: stopFor, out: out}
		})}
	}
	return supervisor.Spec{
		Strategy: supervisor.OneForOne,
		Name:     "svctop",
		Children: []supervisor.ChildSpec{
			kid("a", 0, 0),
			supervisor.Child("sub", supervisor.Spec{Children: []supervisor.ChildSpec{kid("b1", 0, 0), kid("b2", 0, 0)}}),
			kid("slow", slow, 200*time.Millisecond), // killed after 200 ms
			kid("c", 0, 0),
		},
	}
}
