//go:build unix

package chaos

import (
	"testing"

	"github.com/colonyrt/colony/internal/disttest"
)

// The test binary is also the worker node: with CHAOS_CHILD set it runs
// childMain instead of the tests.
func TestMain(m *testing.M) { disttest.MainOrChild(m, "CHAOS_CHILD", childMain) }
