package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a scenario leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSupervisionScenario(t *testing.T) {
	if err := supervisionScenario(os.Stdout); err != nil {
		t.Fatal(err)
	}
}
