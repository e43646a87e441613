package actor_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
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

// A named actor's crash report carries its name before its pid (OTP's crash
// report has registered_name); it had only the pid.
func TestCrashReportNamesNamedActor(t *testing.T) {
	var buf lockedBuffer
	sys := testsys.Start(t, actor.Config{Logger: func(f string, a ...any) { fmt.Fprintf(&buf, f+"\n", a...) }})
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { panic("named-boom") }), actor.Name("billing"))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "go")
	want := fmt.Sprintf("actor billing %v exited", pid)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no report naming the actor (%q); logged %q", want, buf.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// SlogLogger writes each report as one Error record: the first line as the
// message, a panic's stack in "detail".
func TestSlogLogger(t *testing.T) {
	var buf lockedBuffer
	l := slog.New(slog.NewJSONHandler(&buf, nil))
	sys := testsys.Start(t, actor.Config{Logger: actor.SlogLogger(l)})
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { panic("slog-boom") }))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "go")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "slog-boom") {
		if time.Now().After(deadline) {
			t.Fatalf("no record; got %q", buf.String())
		}
		time.Sleep(time.Millisecond)
	}
	var rec struct {
		Level, Msg, Detail string
	}
	line := strings.SplitN(buf.String(), "\n", 2)[0]
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("%v: %q", err, line)
	}
	if rec.Level != "ERROR" || !strings.Contains(rec.Msg, "exited") || strings.Contains(rec.Msg, "\n") || !strings.Contains(rec.Detail, "goroutine") {
		t.Fatalf("record %+v", rec)
	}
}

// SlogLogger(nil) logs through slog.Default() instead of panicking on the
// runtime's death path at the first report.
func TestSlogLoggerNil(t *testing.T) {
	var buf lockedBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(prev)
	actor.SlogLogger(nil)("actor %v exited: %v", "x", "boom")
	if !strings.Contains(buf.String(), "boom") {
		t.Fatalf("nothing logged through slog.Default: %q", buf.String())
	}
}
