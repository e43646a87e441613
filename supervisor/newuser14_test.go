package supervisor_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

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

type nu14Crasher struct{ actor.ServerBase }

func (nu14Crasher) HandleCast(c *actor.Context, msg any) {
	if msg == "boom" {
		panic("nu14 boom")
	}
}

// An operator's view of the logs of a crash loop: a supervised server
// panics twice; intensity 1 lets one restart, the second crash makes the
// supervisor give up. Each event is one slog record, the panic's with its
// stack; nothing is reported twice.
func TestNewUser14CrashLoopReports(t *testing.T) {
	var buf lockedBuf
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	sys := testsys.Start(t, actor.Config{Logger: actor.SlogLogger(logger)})
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Name:      "nu14sup",
		Intensity: 1, Period: time.Minute,
		Children: []supervisor.ChildSpec{{
			ID:    "crasher",
			Start: supervisor.ServerStart(func(...any) actor.Server { return nu14Crasher{} }, actor.WithSpawn(actor.Name("nu14crasher"))),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := sys.Monitor(sup)
	for i := 0; i < 2; i++ {
		var pid actor.Pid
		deadline := time.Now().Add(5 * time.Second)
		for {
			p, ok := sys.Whereis("nu14crasher")
			if ok && sys.Alive(p) {
				pid = p
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("crasher not running")
			}
			time.Sleep(time.Millisecond)
		}
		cw, _ := sys.Monitor(pid)
		actor.Cast(sys, pid, "boom")
		<-cw.Done()
	}
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("supervisor did not give up")
	}
	time.Sleep(50 * time.Millisecond)
	recs := buf.records(t)
	var msgs []string
	for _, r := range recs {
		if r["level"] != "ERROR" {
			t.Errorf("record at level %v: %v", r["level"], r)
		}
		msgs = append(msgs, r["msg"].(string))
	}
	count := func(sub string) int {
		n := 0
		for _, m := range msgs {
			if strings.Contains(m, sub) {
				n++
			}
		}
		return n
	}
	if n := count("nu14crasher <1."); n != 2 {
		t.Errorf("%d crash reports naming the actor, want 2: %q", n, msgs)
	}
	if n := count("child crasher"); n != 3 {
		t.Errorf("%d supervisor reports about the child, want 2 terminated + 1 shutdown: %q", n, msgs)
	}
	if n := count("reached max restart intensity"); n != 1 {
		t.Errorf("%d intensity reports, want 1: %q", n, msgs)
	}
	if len(msgs) != 5 {
		t.Errorf("%d records, want 5 (no duplicates): %q", len(msgs), msgs)
	}
	for _, r := range recs {
		if strings.Contains(r["msg"].(string), "panicked") && strings.HasPrefix(r["msg"].(string), "actor ") {
			d, _ := r["detail"].(string)
			if !strings.Contains(d, "nu14Crasher.HandleCast") {
				t.Errorf("crash report's stack lacks the handler's frame: %q", d)
			}
		}
	}
}
