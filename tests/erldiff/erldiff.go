package erldiff

// Design note: running Erlang from go test.
//
// Each scenario is an escript run as its own OS process (a fresh node, about
// 0.2 s to start), not a long-lived node shared by all tests: a crashed or
// hung scenario then cannot poison the next one, and tests may run in
// parallel. The escript is killed with its whole process group when the
// timeout runs out (escript execs erl, which execs beam.smp, which forks
// erl_child_setup), so a hung scenario never outlives its test.
//
// Scenario files include ../colony_trace.hrl (and ../colony_sup.hrl); an
// inline script is written to a temporary directory that holds copies of the
// headers both one level up and alongside, so the same -include lines work.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/internal/erlenv"
)

// DefaultTimeout bounds one escript run in [Run]: a bound for failure (a
// hung node), not the time a run takes. Scenarios take well under two
// seconds on a quiet machine; with the whole suite under -race beside other
// builds on two cores (a load of 25-30), gen_server/name_free and
// continue_order ran past a 60 s bound.
const DefaultTimeout = 3 * time.Minute

// MissingErlangCI is the failure message when escript is not on PATH and CI
// is set.
const MissingErlangCI = "erl not installed: .ci/run must apt-get install erlang-nox"

// headers are the include files scenarios use, in the testdata directory.
var headers = []string{"colony_trace.hrl", "colony_sup.hrl", "colony_timers.hrl", "colony_gensrv.hrl", "colony_tcp.hrl", "colony_pg.hrl"}

// Dir is the absolute path of tests/testdata/erlang.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("erldiff: cannot locate own source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "erlang")
}

// Run runs an Erlang escript with [DefaultTimeout] and returns its trace
// lines (stdout, one line per event, without the trailing newline).
//
// script is either inline escript source (anything containing a newline) or
// the name of a scenario file: absolute, or relative to [Dir], with or
// without the .escript extension ("links/chain_abnormal"). Inline source
// needs no #! line; it may include "colony_trace.hrl" or
// "../colony_trace.hrl".
//
// Run fails the test if the escript exits non-zero, times out, or prints a
// line that is not canonical (a raw pid, ref, fun, port, an unnamed process
// or an escript module name). If escript is not on PATH, Run skips the test
// with a loud message, or fails it with [MissingErlangCI] when the
// environment variable CI is non-empty.
func Run(t testing.TB, script string) []string {
	t.Helper()
	return RunTimeout(t, script, DefaultTimeout)
}

// RunTimeout is [Run] with the given timeout.
func RunTimeout(t testing.TB, script string, timeout time.Duration) []string {
	t.Helper()
	escript := requireEscript(t)
	path := scriptPath(t, script)

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, escript, path)
	cmd.Dir = filepath.Dir(path)
	// No crash dump files left behind by a scenario that brings the node down.
	cmd.Env = erlenv.Env("ERL_CRASH_DUMP_SECONDS=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	err := cmd.Run()
	lines := splitLines(stdout.String())
	if ctx.Err() != nil {
		t.Fatalf("erldiff: %s timed out after %v\n%s", script, timeout, report(lines, stderr.String()))
		return nil
	}
	if err != nil {
		t.Fatalf("erldiff: %s: %v\n%s", script, err, report(lines, stderr.String()))
		return nil
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Logf("erldiff: %s stderr:\n%s", script, s)
	}
	if err := checkCanonical(lines); err != nil {
		t.Fatalf("erldiff: %s: %v\n%s", script, err, report(lines, ""))
		return nil
	}
	t.Logf("erldiff: %s: %d trace lines in %v", shortName(script), len(lines), time.Since(start).Round(time.Millisecond))
	return lines
}

// Compare reports whether the Go trace equals the Erlang one. On a mismatch
// it fails the test (without stopping it) with a line diff: "-" lines are
// only in Erlang's trace, "+" lines only in Go's.
func Compare(t testing.TB, erlang, goLines []string) bool {
	t.Helper()
	if equal(erlang, goLines) {
		return true
	}
	t.Errorf("erldiff: trace mismatch (-erlang +go):\n%s", Diff(erlang, goLines))
	return false
}

// Golden returns the checked-in trace next to a scenario file (the .trace
// with the same base name). It is for review and for Go-only tests that must
// run without Erlang; differential tests should use [Run].
func Golden(t testing.TB, script string) []string {
	t.Helper()
	b, err := os.ReadFile(goldenPath(script))
	if err != nil {
		t.Fatalf("erldiff: golden trace: %v", err)
	}
	return splitLines(string(b))
}

// Scenarios lists the scenario files of a group ("links", "supervisor",
// "timers", "gen_server", "tcp", "pg", "gen_statem"), as
// names Run accepts ("links/chain_abnormal"), sorted.
func Scenarios(t testing.TB, group string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(Dir(), group, "*.escript"))
	if err != nil {
		t.Fatalf("erldiff: %v", err)
	}
	if len(files) == 0 {
		t.Fatalf("erldiff: no scenarios in %s", filepath.Join(Dir(), group))
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = group + "/" + strings.TrimSuffix(filepath.Base(f), ".escript")
	}
	sort.Strings(names)
	return names
}

// Diff renders a line diff of want (Erlang) and got (Go), based on a longest
// common subsequence: "  " for common lines, "- " for lines only in want,
// "+ " for lines only in got. Each line carries its line number in want or
// got.
func Diff(want, got []string) string {
	// lcs[i][j] is the LCS length of want[i:] and got[j:].
	lcs := make([][]int, len(want)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(got)+1)
	}
	for i := len(want) - 1; i >= 0; i-- {
		for j := len(got) - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case i < len(want) && j < len(got) && want[i] == got[j]:
			fmt.Fprintf(&b, "  %3d     %s\n", i+1, want[i])
			i, j = i+1, j+1
		case i < len(want) && (j == len(got) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&b, "- %3d     %s\n", i+1, want[i])
			i++
		default:
			fmt.Fprintf(&b, "+     %3d %s\n", j+1, got[j])
			j++
		}
	}
	return b.String()
}

// requireEscript returns the path of escript, or skips or fails the test.
func requireEscript(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("escript")
	if err == nil {
		return path
	}
	fail, msg := missingErlang(os.Getenv("CI"))
	if fail {
		t.Fatal(msg)
		return ""
	}
	// Skips are easy to miss without -v: say it once on stderr too.
	skipNotice.Do(func() { fmt.Fprintln(os.Stderr, msg) })
	t.Skip(msg)
	return ""
}

var skipNotice sync.Once

// missingErlang decides what a test does when escript is missing: fail in CI
// (ci is the CI environment variable), skip elsewhere.
func missingErlang(ci string) (fail bool, msg string) {
	if ci != "" {
		return true, MissingErlangCI
	}
	return false, "erldiff: *** SKIPPING Erlang differential test: escript is not on PATH " +
		"(apt-get install erlang-nox); with CI set this is a failure ***"
}

// scriptPath resolves a scenario name, or writes inline source to a
// temporary file, and returns the file's path.
func scriptPath(t testing.TB, script string) string {
	t.Helper()
	if strings.Contains(script, "\n") {
		return writeInline(t, script)
	}
	path := script
	if !filepath.IsAbs(path) {
		path = filepath.Join(Dir(), path)
	}
	if filepath.Ext(path) != ".escript" {
		path += ".escript"
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("erldiff: scenario %q: %v", script, err)
	}
	return path
}

func writeInline(t testing.TB, src string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "inline")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("erldiff: %v", err)
	}
	for _, h := range headers {
		b, err := os.ReadFile(filepath.Join(Dir(), h))
		if err != nil {
			t.Fatalf("erldiff: %v", err)
		}
		for _, d := range []string{root, dir} {
			if err := os.WriteFile(filepath.Join(d, h), b, 0o644); err != nil {
				t.Fatalf("erldiff: %v", err)
			}
		}
	}
	// escript always skips the first line, taking it for a #! line.
	if !strings.HasPrefix(src, "#!") {
		src = "#!/usr/bin/env escript\n" + src
	}
	path := filepath.Join(dir, "inline.escript")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatalf("erldiff: %v", err)
	}
	return path
}

func goldenPath(script string) string {
	path := script
	if !filepath.IsAbs(path) {
		path = filepath.Join(Dir(), path)
	}
	return strings.TrimSuffix(path, ".escript") + ".trace"
}

func shortName(script string) string {
	if strings.Contains(script, "\n") {
		return "inline script"
	}
	return script
}

// splitLines splits output into lines, dropping one trailing newline (and
// any \r a Windows-built tool might add).
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// nonCanonical are substrings that mark a trace line as not canonical: raw
// terms whose text changes from run to run, and the Erlang helpers' markers
// for a pid, ref or socket that was never named.
var nonCanonical = []string{"<0.", "#Ref<", "#Fun<", "#Port<", "unnamed_pid", "unnamed_ref", "unnamed_sock", "escript__"}

// checkCanonical returns an error naming the first line that is not a
// canonical trace line.
func checkCanonical(lines []string) error {
	for i, l := range lines {
		for _, bad := range nonCanonical {
			if strings.Contains(l, bad) {
				return fmt.Errorf("trace line %d is not canonical (contains %q): %s", i+1, bad, l)
			}
		}
		if l == "" || strings.TrimSpace(l) != l || strings.Contains(l, "  ") {
			return fmt.Errorf("trace line %d is not canonical (empty, or stray spaces): %q", i+1, l)
		}
	}
	return nil
}

func report(lines []string, stderr string) string {
	var b strings.Builder
	b.WriteString("--- stdout:\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if s := strings.TrimSpace(stderr); s != "" {
		b.WriteString("--- stderr:\n")
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.String()
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
