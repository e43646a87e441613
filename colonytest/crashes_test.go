package colonytest_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

// TestCrashesKillAndTrace: a kill chosen by the source lands before the
// victim's step, its monitors see killed, and the trace says so; the body
// and the probes are never candidates.
func TestCrashesKillAndTrace(t *testing.T) {
	res := colonytest.Run(t, 1, func(t *testing.T, sys *actor.System) {
		pid, err := sys.Spawn(&echo{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := sys.Monitor(pid)
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(pid, "x") // its step: the first candidate, killed (rate 1)
		select {
		case <-w.Done():
		case <-time.After(time.Second): // virtual
			t.Fatal("the worker was not killed")
		}
		if r := w.Reason(); r != actor.Killed {
			t.Fatalf("Down reason %v, want killed", r)
		}
	}, colonytest.Crashes(1, 1, func(c colonytest.Candidate) bool { return c.Type == "*colonytest_test.echo" }))
	if !slices.ContainsFunc(res.Trace, func(l string) bool { return strings.Contains(l, " kill <0.0.1> *colonytest_test.echo") }) ||
		!strings.Contains(res.Schedule, ":kill") {
		t.Fatalf("no kill in the trace or schedule %q:\n%s", res.Schedule, strings.Join(res.Trace, "\n"))
	}
}
