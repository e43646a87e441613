package erldiff

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs the tests, then, if escript is not on PATH, says that the
// tests that run Erlang were skipped: their skips show only with -v.
func TestMain(m *testing.M) {
	code := m.Run()
	if _, err := exec.LookPath("escript"); err != nil && os.Getenv("ERLDIFF_HELPER") == "" {
		visible("tests/erldiff: no escript on PATH: the tests that run Erlang were skipped (apt-get install erlang-nox)")
	}
	os.Exit(code)
}

// visible prints line where a plain `go test ./...` shows it, as
// visible in ../main_test.go does: to the go command's stderr when it is
// this binary's parent (in package list mode it keeps a passing package's
// output to itself), else to this binary's stderr.
func visible(line string) {
	if !testing.Verbose() {
		ppid := os.Getppid()
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ppid)); err == nil && strings.TrimSuffix(filepath.Base(exe), ".exe") == "go" {
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
