package tests

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/colonyrt/colony/tests/erldiff"
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
		erldiff.Visible(line)
	}
	os.Exit(code)
}
