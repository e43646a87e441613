package erldiff

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden *.trace files from a live Erlang run")

// fakeTB records what Run and Compare report. Fatal, Fatalf, Skip and Skipf
// end the calling goroutine, as in testing, so fakes run in capture's own
// goroutine.
type fakeTB struct {
	testing.TB // the real test, for TempDir, Cleanup, Name
	mu         sync.Mutex
	logs       []string
	failed     bool
	skipped    bool
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) record(failed, skipped bool, s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, s)
	f.failed = f.failed || failed
	f.skipped = f.skipped || skipped
}

func (f *fakeTB) Logf(format string, args ...any) {
	f.record(false, false, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.record(true, false, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatal(args ...any) { f.record(true, false, fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.record(true, false, fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (f *fakeTB) Skip(args ...any) { f.record(false, true, fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeTB) Skipf(format string, args ...any) {
	f.record(false, true, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (f *fakeTB) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.logs, "\n")
}

// capture runs fn against a fakeTB in its own goroutine and waits for it.
func capture(t *testing.T, fn func(tb testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want, got []string
		diff      string
	}{
		{"equal", []string{"a", "b"}, []string{"a", "b"}, "" +
			"    1     a\n" +
			"    2     b\n"},
		{"missing", []string{"start w1", "stop w1 boom", "start w1"}, []string{"start w1", "start w1"}, "" +
			"    1     start w1\n" +
			"-   2     stop w1 boom\n" +
			"    3     start w1\n"},
		{"extra", []string{"down m1 a boom"}, []string{"down m1 a boom", "mailbox main x"}, "" +
			"    1     down m1 a boom\n" +
			"+       2 mailbox main x\n"},
		{"changed", []string{"down m1 a killed", "mailbox empty"}, []string{"down m1 a kill", "mailbox empty"}, "" +
			"-   1     down m1 a killed\n" +
			"+       1 down m1 a kill\n" +
			"    2     mailbox empty\n"},
		{"reordered", []string{"stop w3 shutdown", "stop w2 shutdown"}, []string{"stop w2 shutdown", "stop w3 shutdown"}, "" +
			"-   1     stop w3 shutdown\n" +
			"    2     stop w2 shutdown\n" +
			"+       2 stop w3 shutdown\n"},
		{"empty go", []string{"a"}, nil, "-   1     a\n"},
		{"both empty", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := Diff(tc.want, tc.got); d != tc.diff {
				t.Errorf("Diff:\n%s\nwant:\n%s", d, tc.diff)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	f := capture(t, func(tb testing.TB) {
		if !Compare(tb, []string{"a", "b"}, []string{"a", "b"}) {
			tb.Errorf("equal traces reported as different")
		}
	})
	if f.failed {
		t.Fatalf("Compare failed equal traces: %s", f.text())
	}
	var ok bool
	f = capture(t, func(tb testing.TB) {
		ok = Compare(tb, []string{"down m1 b boom", "mailbox empty"}, []string{"down m1 b normal", "mailbox empty"})
	})
	if ok || !f.failed {
		t.Fatalf("Compare accepted different traces (ok=%v failed=%v)", ok, f.failed)
	}
	for _, want := range []string{"trace mismatch (-erlang +go)", "-   1     down m1 b boom", "+       1 down m1 b normal"} {
		if !strings.Contains(f.text(), want) {
			t.Errorf("Compare report lacks %q:\n%s", want, f.text())
		}
	}
}

func TestCheckCanonical(t *testing.T) {
	good := []string{"down m1 b boom", "exit a b {shutdown,x}", "mailbox main {'DOWN',m1,process,a,boom}"}
	if err := checkCanonical(good); err != nil {
		t.Errorf("canonical lines rejected: %v", err)
	}
	for _, bad := range []string{
		"down m1 <0.85.0> boom",
		"mailbox main {'DOWN',#Ref<0.1.2.3>,process,a,boom}",
		"recv main #Fun<erl_eval.1.2>",
		"down m1 unnamed_pid boom",
		"demonitor unnamed_ref true",
		"close main unnamed_sock ok",
		"which_children sup [{w1,w1,worker,[x_escript__escript__1_2_3]}]",
		"",
		" down m1 a boom",
		"down  m1 a boom",
		"down m1 a boom ",
	} {
		if err := checkCanonical([]string{"start w1", bad}); err == nil {
			t.Errorf("non-canonical line %q accepted", bad)
		} else if !strings.Contains(err.Error(), "line 2") {
			t.Errorf("error does not name line 2: %v", err)
		}
	}
}

func TestMissingErlang(t *testing.T) {
	if fail, msg := missingErlang("1"); !fail || msg != MissingErlangCI {
		t.Errorf("missingErlang(CI=1) = %v, %q; want fail with %q", fail, msg, MissingErlangCI)
	}
	if fail, msg := missingErlang(""); fail || !strings.Contains(msg, "SKIPPING") {
		t.Errorf("missingErlang(CI=) = %v, %q; want a loud skip", fail, msg)
	}
}

// TestRunWithoutErlang runs TestHelperNoErlang in a subprocess whose PATH
// has no escript: it must skip without CI and fail with MissingErlangCI with
// CI set.
func TestRunWithoutErlang(t *testing.T) {
	if os.Getenv("ERLDIFF_HELPER") != "" {
		t.Skip("in helper subprocess")
	}
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperNoErlang$", "-test.v")
		cmd.Env = append(os.Environ(), "ERLDIFF_HELPER=1", "PATH="+t.TempDir(), "CI="+ci)
		out, err := cmd.CombinedOutput()
		switch {
		case ci == "" && (err != nil || !strings.Contains(string(out), "--- SKIP: TestHelperNoErlang") ||
			!strings.Contains(string(out), "SKIPPING")):
			t.Errorf("without CI: want a loud skip, got err=%v\n%s", err, out)
		case ci != "" && (err == nil || !strings.Contains(string(out), "--- FAIL: TestHelperNoErlang") ||
			!strings.Contains(string(out), MissingErlangCI)):
			t.Errorf("with CI: want a failure naming %q, got err=%v\n%s", MissingErlangCI, err, out)
		}
	}
}

func TestHelperNoErlang(t *testing.T) {
	if os.Getenv("ERLDIFF_HELPER") == "" {
		t.Skip("helper for TestRunWithoutErlang")
	}
	Run(t, "links/chain_abnormal")
	t.Error("Run returned without escript on PATH")
}

func TestRunInline(t *testing.T) {
	got := Run(t, `
main(_) ->
    io:format("hello~n"),
    io:format("~w ~w~n", [{shutdown, x}, 'EXIT']).
`)
	Compare(t, []string{"hello", "{shutdown,x} 'EXIT'"}, got)
}

func TestRunInlineHelpers(t *testing.T) {
	got := Run(t, `-mode(compile).
-include("../colony_trace.hrl").
main(_) ->
    start_trace(),
    A = spawn_loop(a),
    M = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(M),
    mailbox().
`)
	Compare(t, []string{"down m1 a boom", "mailbox empty"}, got)
}

func TestRunScenarioName(t *testing.T) {
	for _, name := range []string{"links/monitor_dead", "links/monitor_dead.escript", filepath.Join(Dir(), "links", "monitor_dead.escript")} {
		Compare(t, []string{"down m1 d noproc", "down m2 d noproc", "mailbox empty"}, Run(t, name))
	}
}

func TestRunFailures(t *testing.T) {
	requireEscript(t)
	for _, tc := range []struct {
		name, script, want string
		timeout            time.Duration
	}{
		{"crash", "main(_) -> io:format(\"start w1~n\"), exit(boom).\n", "start w1", DefaultTimeout},
		{"syntax", "main(_) -> io:format(\"x~n\")\n", "exit status", DefaultTimeout},
		{"raw pid", "main(_) -> io:format(\"down m1 ~w boom~n\", [self()]).\n", "not canonical", DefaultTimeout},
		{"timeout", "main(_) -> io:format(\"waiting~n\"), receive never -> ok end.\n", "timed out", 3 * time.Second},
		{"no such scenario", "links/no_such_scenario", "no_such_scenario", DefaultTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			f := capture(t, func(tb testing.TB) { RunTimeout(tb, tc.script, tc.timeout) })
			if !f.failed || !strings.Contains(f.text(), tc.want) {
				t.Errorf("want a failure mentioning %q, got failed=%v:\n%s", tc.want, f.failed, f.text())
			}
			if el := time.Since(start); el > tc.timeout+10*time.Second {
				t.Errorf("took %v with timeout %v: the escript was not killed", el, tc.timeout)
			}
		})
	}
}

func TestSplitLines(t *testing.T) {
	for in, want := range map[string][]string{
		"":             nil,
		"a\n":          {"a"},
		"a\nb":         {"a", "b"},
		"a\r\nb\r\n":   {"a", "b"},
		"a\n\nb\n":     {"a", "", "b"},
		"start w1\n\n": {"start w1", ""},
	} {
		if got := splitLines(in); !equal(got, want) {
			t.Errorf("splitLines(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestScenarioFiles checks the scenario set itself: enough scenarios, each
// with a golden trace and a header comment, each listed in the README.
func TestScenarioFiles(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(Dir(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for group, min := range map[string]int{"links": 18, "supervisor": 30, "timers": 20, "gen_server": 18, "tcp": 9, "pg": 15, "gen_statem": 15} {
		names := Scenarios(t, group)
		if len(names) < min {
			t.Errorf("%s: %d scenarios, want at least %d", group, len(names), min)
		}
		for _, n := range names {
			src, err := os.ReadFile(filepath.Join(Dir(), n+".escript"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitN(string(src), "\n", 3)
			if len(lines) < 3 || !strings.HasPrefix(lines[0], "#!") || !strings.HasPrefix(lines[1], "%% "+filepath.Base(n)+": ") {
				t.Errorf("%s: want a #! line, then \"%%%% %s: what it checks\"", n, filepath.Base(n))
			}
			if _, err := os.Stat(goldenPath(n)); err != nil {
				t.Errorf("%s: no golden trace: %v", n, err)
			}
			if !strings.Contains(string(readme), "`"+filepath.Base(n)+"`") {
				t.Errorf("%s: not listed in README.md", n)
			}
		}
	}
}

// TestGoldenFiles, with -update, runs every scenario live and rewrites its
// golden trace. Without -update it checks nothing: the differential tests
// in ./tests run every escript live and compare its trace with the golden
// file as well as with the Go side (a difference there means a stale golden
// file or a scenario that is not deterministic), so that the suite runs each
// escript once.
func TestGoldenFiles(t *testing.T) {
	if !*update {
		t.Skip("the golden traces are checked against live runs by go test ./tests; -update rewrites them")
	}
	requireEscript(t)
	for _, group := range []string{"links", "supervisor", "timers", "gen_server", "tcp", "pg", "gen_statem"} {
		for _, name := range Scenarios(t, group) {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				got := Run(t, name)
				data := strings.Join(got, "\n") + "\n"
				if err := os.WriteFile(goldenPath(name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestGoldenTracesCanonical: every scenario's golden trace reads back
// through Golden, is not empty and holds only canonical lines (no raw pid,
// ref or fun), as a live run's must.
func TestGoldenTracesCanonical(t *testing.T) {
	for _, group := range []string{"links", "supervisor", "timers", "gen_server", "tcp", "pg", "gen_statem"} {
		for _, name := range Scenarios(t, group) {
			lines := Golden(t, name)
			if len(lines) == 0 {
				t.Errorf("%s: empty golden trace", name)
			}
			if err := checkCanonical(lines); err != nil {
				t.Errorf("%s: golden trace: %v", name, err)
			}
		}
	}
}
