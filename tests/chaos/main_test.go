//go:build unix

package chaos

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// The test binary is also the worker node: with CHAOS_CHILD set it runs
// childMain instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("CHAOS_CHILD") != "" {
		os.Exit(childMain(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}
