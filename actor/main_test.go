package actor_test

import (
	"os"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// soak is set by COLONY_SOAK (.ci/run sets it): stress tests then run at
// their full size under -race too, where the README's go test -race ./...
// runs them smaller.
var soak = os.Getenv("COLONY_SOAK") != ""

// start starts a System that is shut down (and checked for leftovers) when
// the test ends.
func start(t testing.TB, cfg actor.Config) *actor.System {
	t.Helper()
	return testsys.Start(t, cfg)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// recv waits for a value on ch.
func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a value")
		panic("unreachable")
	}
}
