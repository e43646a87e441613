package colonytest_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
)

var rapidFailedAfter = regexp.MustCompile(`failed after (\d+) tests`)

// TestFindCountsRunsAsRapidDoes: Found.Passed is the N of rapid's "failed
// after N tests" (the runs that passed before the first failure), and
// Found's line says so in words that agree with it: a body that fails from
// its k-th run on has k-1 passing runs.
func TestFindCountsRunsAsRapidDoes(t *testing.T) {
	for _, failFrom := range []int{1, 2, 4} {
		runs := 0
		found := colonytest.Find(t, 10, func(t *rapid.T, sys *actor.System) {
			if runs++; runs >= failFrom {
				t.Fatalf("run %d fails", runs)
			}
		})
		if found == nil {
			t.Fatalf("failing from run %d: nothing found", failFrom)
		}
		m := rapidFailedAfter.FindStringSubmatch(found.Message)
		if m == nil {
			t.Fatalf("failing from run %d: rapid's message has no count:\n%s", failFrom, found.Message)
		}
		if n, _ := strconv.Atoi(m[1]); n != found.Passed || n != failFrom-1 {
			t.Errorf("failing from run %d: rapid says %q, Found.Passed is %d, want %d", failFrom, m[0], found.Passed, failFrom-1)
		}
		if found.Runs < failFrom {
			t.Errorf("failing from run %d: Found.Runs is %d", failFrom, found.Runs)
		}
		passing := strconv.Itoa(failFrom-1) + " passing runs,"
		if failFrom == 2 {
			passing = "1 passing run,"
		}
		if s := found.String(); !strings.HasPrefix(s, "failed after "+passing) {
			t.Errorf("failing from run %d: Found says %q, want it to begin %q", failFrom, s, "failed after "+passing)
		}
	}
}

// TestFoundLine: Found's line, word for word, singular and plural.
func TestFoundLine(t *testing.T) {
	for _, c := range []struct {
		f    colonytest.Found
		want string
	}{
		{colonytest.Found{Passed: 0, Runs: 23, Steps: 9, Schedule: "1:1/2"},
			"failed after 0 passing runs, 23 runs in all with shrinking; shrunk to 9 steps, schedule 1:1/2"},
		{colonytest.Found{Passed: 0, Runs: 1, Steps: 1, Schedule: "canonical (no reordering)"},
			"failed after 0 passing runs, 1 run in all with shrinking; shrunk to 1 step, schedule canonical (no reordering)"},
		{colonytest.Found{Passed: 1, Runs: 5, Steps: 3, Schedule: "2:kill"},
			"failed after 1 passing run, 5 runs in all with shrinking; shrunk to 3 steps, schedule 2:kill"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("Found%+v says\n  %q, want\n  %q", c.f, got, c.want)
		}
	}
}
