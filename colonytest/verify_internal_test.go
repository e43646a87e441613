package colonytest

import (
	"runtime"
	"testing"

	"github.com/colonyrt/colony/actor"
)

// TestDivergenceIsNamed: two goroutines of the test's own, each sending to
// one actor, race outside the mode's control; the comparison of two runs
// finds where they part (over a few tries: the race may go the same way
// twice).
func TestDivergenceIsNamed(t *testing.T) {
	body := func(t *testing.T, sys *actor.System) {
		p, err := NewProbe(sys)
		if err != nil {
			t.Fatal(err)
		}
		pid := p.Pid()
		done := make(chan struct{}, 2)
		for g := 0; g < 2; g++ {
			go func() {
				for i := 0; i < 200; i++ {
					sys.Send(pid, g*1000+i)
					runtime.Gosched()
				}
				done <- struct{}{}
			}()
		}
		<-done
		<-done
		if got, err := p.Messages(); err != nil || len(got) != 400 {
			t.Fatalf("the probe got %d messages (%v), want 400", len(got), err)
		}
	}
	for try := 0; try < 20; try++ {
		a := Run(t, 5, body)
		b := Run(t, 5, body)
		if d := firstDiff(a.Trace, b.Trace); d >= 0 {
			t.Logf("try %d: the runs part at event %d: %q vs %q", try, d, a.Trace[d], b.Trace[d])
			return
		}
	}
	t.Fatal("20 pairs of runs with racing goroutines gave identical traces")
}
