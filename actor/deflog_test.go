package actor_test

import (
	"bytes"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
)

// lockedBuffer is an io.Writer safe for the log package's concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDefaultLoggerIsStdLog: with no Config.Logger, a crash report goes to
// the log package's standard logger (as net/http.Server's nil ErrorLog), so
// a panic in a handler is never silent by default. It was dropped.
func TestDefaultLoggerIsStdLog(t *testing.T) {
	var buf lockedBuffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&buf)
	log.SetFlags(0)
	defer func() { log.SetOutput(prev); log.SetFlags(flags) }()

	sys := testsys.Start(t, actor.Config{})
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { panic("default-logger-boom") }))
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Send(pid, "go"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "default-logger-boom") {
		if time.Now().After(deadline) {
			t.Fatalf("no crash report on the standard logger; it has %q", buf.String())
		}
		time.Sleep(time.Millisecond)
	}
	if !strings.Contains(buf.String(), "exited") || !strings.Contains(buf.String(), "goroutine") {
		t.Fatalf("the report lacks the exit line or the stack: %q", buf.String())
	}
}
