package main

import (
	"os"
	"testing"
)

func TestSupervisionScenario(t *testing.T) {
	if err := supervisionScenario(os.Stdout); err != nil {
		t.Fatal(err)
	}
}
