package erldiff

import (
	"os"
	"os/exec"
	"testing"
)

// TestMain runs the tests, then, if escript is not on PATH, says that the
// tests that run Erlang were skipped: their skips show only with -v.
func TestMain(m *testing.M) {
	code := m.Run()
	if _, err := exec.LookPath("escript"); err != nil && os.Getenv("ERLDIFF_HELPER") == "" {
		Visible("tests/erldiff: no escript on PATH: the tests that run Erlang were skipped (apt-get install erlang-nox)")
	}
	os.Exit(code)
}
