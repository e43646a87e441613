package dist_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/internal/erltest"
	"github.com/colonyrt/colony/internal/disttest"
	"github.com/colonyrt/colony/internal/testsys"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The scaffolding the distribution tests share (internal/disttest,
// dist/internal/erltest), under the names these tests use.
var (
	// testEPMD: a real private epmd when one is installed, else a
	// registrar served by this process (which stops with the test).
	testEPMD = func(t testing.TB) int { return disttest.EPMD(t, erltest.EPMD) }
	// uniqueName: a node name no other test of this process uses.
	uniqueName = disttest.UniqueName
	eventually = disttest.Eventually
	ctxT       = disttest.Ctx
	freePort   = erltest.FreePort
)

// logBuf collects a node's log lines for assertions.
type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuf) Enabled(context.Context, slog.Level) bool { return true }
func (b *logBuf) Handle(_ context.Context, r slog.Record) error {
	b.mu.Lock()
	b.lines = append(b.lines, r.Level.String()+" "+r.Message)
	b.mu.Unlock()
	return nil
}
func (b *logBuf) WithAttrs([]slog.Attr) slog.Handler { return b }
func (b *logBuf) WithGroup(string) slog.Handler      { return b }

func (b *logBuf) has(sub string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// count is the number of lines that contain sub.
func (b *logBuf) count(sub string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := 0
	for _, l := range b.lines {
		if strings.Contains(l, sub) {
			k++
		}
	}
	return k
}

func (b *logBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

type testNode struct {
	*dist.Node
	sys      *actor.System
	logs     *logBuf
	epmdPort int
	tick     time.Duration // the TickTime it was started with (0: the default)
}

// startNode starts a System and a node on it, registered with the epmd at
// port; both stop at the test's end (the System's Shutdown stops the node).
func startNode(t testing.TB, port int, cfg dist.Config) *testNode {
	t.Helper()
	return startNodeOn(t, testsys.Start(t, actor.Config{}), port, cfg)
}

// startNodeOn is startNode on a System of the test's own.
func startNodeOn(t testing.TB, sys *actor.System, port int, cfg dist.Config) *testNode {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = uniqueName("colony")
	}
	if cfg.Cookie == "" {
		cfg.Cookie = "cookie"
	}
	cfg.EPMDPort = port
	logs := &logBuf{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(logs)
	}
	n, err := dist.Start(sys, cfg)
	if err != nil {
		t.Fatalf("dist.Start %s: %v", cfg.Name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log of %s:\n%s", cfg.Name, logs)
		}
	})
	return &testNode{Node: n, sys: sys, logs: logs, epmdPort: port, tick: cfg.TickTime}
}

// echo answers {From, Msg} with Msg sent to From; anything else it hands
// to got.
type echo struct{ got chan any }

func (e *echo) Receive(c *actor.Context, msg any) {
	if t, ok := msg.(etf.Tuple); ok && len(t) == 2 {
		if from, ok := t[0].(actor.Pid); ok {
			c.Send(from, t[1])
			return
		}
	}
	if e.got != nil {
		e.got <- msg
	}
}

// collector hands every message to ch.
type collector struct{ ch chan any }

func (c *collector) Receive(_ *actor.Context, msg any) { c.ch <- msg }

func spawnCollector(t *testing.T, sys *actor.System, buf int, opts ...actor.SpawnOption) (actor.Pid, chan any) {
	t.Helper()
	ch := make(chan any, buf)
	pid, err := sys.Spawn(&collector{ch}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return pid, ch
}

func recv(t *testing.T, ch <-chan any, d time.Duration) any {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("no message within %v", d)
		return nil
	}
}
