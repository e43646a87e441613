package actor

import (
	"context"
	"testing"
	"time"
)

// startInternal starts a System for a test inside the package and shuts it
// down when the test ends.
func startInternal(t testing.TB, cfg Config) *System {
	t.Helper()
	sys, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
	})
	return sys
}
