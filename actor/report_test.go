package actor_test

import (
	"bytes"
	"encoding/json"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// reportSink collects Reports, for Config.Reporter.
type reportSink struct {
	mu sync.Mutex
	rs []actor.Report
}

func (s *reportSink) Report(r actor.Report) {
	s.mu.Lock()
	s.rs = append(s.rs, r)
	s.mu.Unlock()
}

// wait returns the reports once there are n, failing the test after 5 s.
func (s *reportSink) wait(t *testing.T, n int) []actor.Report {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		rs := append([]actor.Report(nil), s.rs...)
		s.mu.Unlock()
		if len(rs) >= n {
			return rs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d reports, want %d: %+v", len(rs), n, rs)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestReporterCrashReport: a handler's panic reaches Config.Reporter as a
// Report with typed fields (the actor, its name, the reason, the stack),
// and Config.Logger, when also set, gets the same report as text: the
// operations pass had only one printf string to parse.
func TestReporterCrashReport(t *testing.T) {
	var rs reportSink
	var l logSink
	sys := start(t, actor.Config{Reporter: rs.Report, Logger: l.Log})
	pid, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) { panic("boom") }), actor.Name("crasher"))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "go")
	r := rs.wait(t, 1)[0]
	if r.Kind != actor.CrashReport || r.Context != "exited" || r.Pid != pid || r.Name != "crasher" {
		t.Fatalf("report %+v", r)
	}
	p, ok := r.Reason.(actor.Panic)
	if !ok || p.Value != "boom" || r.Stack == "" || r.Stack != p.Stack || !strings.Contains(r.Stack, "report_test.go") {
		t.Fatalf("reason %#v, stack %q", r.Reason, r.Stack)
	}
	if want := "actor crasher " + pid.String() + " exited: actor panicked: boom"; r.Text != want {
		t.Fatalf("text %q, want %q", r.Text, want)
	}
	if got := l.reports(); len(got) != 1 || got[0] != r.Text+"\n"+r.Stack {
		t.Fatalf("Logger got %q, want the text and the stack in one call", got)
	}
}

// TestReporterAloneSilencesTheDefaultLogger: with Reporter set and Logger
// nil, reports go to Reporter only, not to the log package's default.
func TestReporterAloneSilencesTheDefaultLogger(t *testing.T) {
	var buf bytes.Buffer
	orig := log.Writer()
	log.SetOutput(&buf)
	defer log.SetOutput(orig)
	var rs reportSink
	sys := start(t, actor.Config{Reporter: rs.Report})
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) { panic("quiet") }))
	sys.Send(pid, "go")
	rs.wait(t, 1)
	if buf.Len() != 0 {
		t.Fatalf("the default logger wrote %q", buf.String())
	}
}

// TestReporterReplacedReason: a Server whose Terminate changes an abnormal
// reason is reported with the exit reason, and the one it replaced in
// Replaced, both stacks in Stack; the text form is as before.
func TestReporterReplacedReason(t *testing.T) {
	var rs reportSink
	var l logSink
	sys := start(t, actor.Config{Reporter: rs.Report, Logger: l.Log})
	pid, err := actor.StartServer(sys, restopper{})
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "panic")
	r := rs.wait(t, 1)[0]
	if r.Kind != actor.CrashReport || r.Reason != actor.Atom("changed") {
		t.Fatalf("report %+v", r)
	}
	if p, ok := r.Replaced.(actor.Panic); !ok || p.Value != "boom" {
		t.Fatalf("replaced %#v, want the panic", r.Replaced)
	}
	if !strings.Contains(r.Stack, "stopping with: actor panicked: boom") || !strings.Contains(r.Stack, "HandleInfo") {
		t.Fatalf("stack %q", r.Stack)
	}
	if want := "actor " + pid.String() + " exited: changed"; r.Text != want {
		t.Fatalf("text %q, want %q", r.Text, want)
	}
	if got := l.reports(); len(got) != 1 || got[0] != r.Text+"\n"+r.Stack {
		t.Fatalf("Logger got %q", got)
	}
	// With no panic on either side, Stack is the line naming the replaced
	// reason alone (Report.Replaced's doc; it said Stack held stacks only).
	pid, err = actor.StartServer(sys, restopper{})
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "stop")
	r = rs.wait(t, 2)[1]
	if r.Reason != actor.Atom("changed") || r.Replaced != actor.Atom("bye") ||
		r.Stack != "(Terminate replaced the reason the server was stopping with: bye)" {
		t.Fatalf("report %+v", r)
	}
}

// TestSlogReporter: SlogReporter writes one record per report, its fields
// as attributes.
func TestSlogReporter(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	h := slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil)
	sys := start(t, actor.Config{Reporter: actor.SlogReporter(slog.New(h))})
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) { panic("json") }), actor.Name("j"))
	sys.Send(pid, "go")
	var rec map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		line := buf.String()
		mu.Unlock()
		if line != "" {
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%v: %q", err, line)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no record")
		}
		time.Sleep(time.Millisecond)
	}
	want := map[string]any{"level": "ERROR", "kind": "crash_report", "context": "exited", "pid": pid.String(), "name": "j", "reason": "actor panicked: json"}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("%s = %v, want %v (record %v)", k, rec[k], v, rec)
		}
	}
	if s, _ := rec["stack"].(string); !strings.Contains(s, "report_test.go") {
		t.Errorf("stack %q", s)
	}
	if m, _ := rec["msg"].(string); !strings.HasPrefix(m, "actor j ") || strings.Contains(m, "\n") {
		t.Errorf("msg %q, want the one-line text", m)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestReportAttrs: the attributes of each kind of report.
func TestReportAttrs(t *testing.T) {
	keys := func(r actor.Report) string {
		var ks []string
		for _, a := range r.Attrs() {
			ks = append(ks, a.Key)
		}
		return strings.Join(ks, " ")
	}
	for _, c := range []struct {
		r    actor.Report
		want string
	}{
		{actor.Report{Kind: actor.WatchdogReport, Context: "retake", Scheduler: 0, Text: "x"}, "kind context scheduler"},
		{actor.Report{Kind: actor.OtherReport, Text: "x"}, "kind"},
		{actor.Report{Kind: actor.OtherReport, Text: "x", Extra: []slog.Attr{slog.String("job", "j"), slog.Int("run", 3)}}, "kind job run"},
		{actor.Report{Kind: actor.SupervisorReport, Context: "shutdown_error", Name: "top", ChildID: "w",
			ChildPids: []actor.Pid{{}, {}}, Reason: actor.Killed}, "kind context name child_id child_pid reason"},
		// A Server whose Terminate replaced its reason: one "replaced"
		// attribute (it was written twice, a duplicate key in a JSON record).
		{actor.Report{Kind: actor.CrashReport, Context: "exited", Reason: actor.Atom("changed"),
			Replaced: actor.Atom("boom"), Stack: "s"}, "kind context reason replaced stack"},
	} {
		if got := keys(c.r); got != c.want {
			t.Errorf("%v: attrs %q, want %q", c.r.Kind, got, c.want)
		}
	}
	if s := actor.ReportKind(9).String(); s != "ReportKind(9)" {
		t.Errorf("bad kind prints %q", s)
	}
}
