// Package testsys starts a System for a test and shuts it down at the
// test's cleanup, for the test packages built on actor.
package testsys

import (
	"context"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Start starts a System with cfg; the test's cleanup shuts it down, giving
// it 10 s, and reports a Shutdown that fails or leaves an actor live.
func Start(t testing.TB, cfg actor.Config) *actor.System {
	t.Helper()
	sys, err := actor.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if st := sys.Stats(); st.Live != 0 {
			t.Errorf("after Shutdown: %d live actors", st.Live)
		}
	})
	return sys
}
