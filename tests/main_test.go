package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// diffCounts counts the differential subtests (runGroup) by what the Go
// side was compared with: a live Erlang/OTP run, the stored golden trace
// (COLONY_GO_ONLY), or nothing (skipped: no escript on PATH).
var diffCounts struct{ otp, golden, skipped atomic.Int64 }

// TestMain runs the tests, then says what the differential scenarios were
// compared with, so that a run without Erlang cannot pass for a full one.
func TestMain(m *testing.M) {
	code := m.Run()
	otp, golden, skipped := diffCounts.otp.Load(), diffCounts.golden.Load(), diffCounts.skipped.Load()
	if otp+golden+skipped > 0 {
		line := fmt.Sprintf("tests: differential scenarios: %d against Erlang/OTP, %d against stored golden traces, %d skipped", otp, golden, skipped)
		switch {
		case skipped > 0:
			line += " (no escript on PATH: apt-get install erlang-nox, or set COLONY_GO_ONLY=1 to compare with the golden traces)"
		case golden > 0:
			line += " (COLONY_GO_ONLY is set: Erlang was not run)"
		}
		visible(line)
	}
	os.Exit(code)
}

// visible prints line where a plain `go test ./...` shows it. In package
// list mode the go command prints a passing package's output only with
// -v, so a line printed here to stdout or stderr would be seen only on a
// failure; when this binary's parent is the go command, the line goes to
// the go command's own stderr (/proc/PPID/fd/2: the terminal or log the
// user reads) instead. Run any other way, to this binary's stderr.
func visible(line string) {
	if !testing.Verbose() {
		ppid := os.Getppid()
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ppid)); err == nil && strings.TrimSuffix(filepath.Base(exe), ".exe") == "go" && appendable(ppid) {
			if f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", ppid), os.O_WRONLY|os.O_APPEND, 0); err == nil {
				_, err = fmt.Fprintln(f, line)
				f.Close()
				if err == nil {
					return
				}
			}
		}
	}
	fmt.Fprintln(os.Stderr, line)
}

// appendable reports whether a write of ours to the go command's stderr
// (process ppid, fd 2) lands after what it has written and stays there: a
// terminal, a pipe or a file it opened for appending. A plain file (go test
// ... > log 2>&1) is written at the go command's own offset, which our
// write does not move, so its next write would overwrite our line.
func appendable(ppid int) bool {
	fi, err := os.Stat(fmt.Sprintf("/proc/%d/fd/2", ppid))
	if err != nil {
		return false
	}
	if !fi.Mode().IsRegular() {
		return true
	}
	info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/2", ppid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&syscall.O_APPEND != 0
		}
	}
	return false
}
