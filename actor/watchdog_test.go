package actor_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestWatchdogRetakeIsReported: a retake (a handler blocked outside the
// runtime while work waits) is reported through Config.Logger, and a
// handler that does it again and again is reported at most once a second,
// with the count of the retakes not reported. An operator had no way to
// hear of it but polling Stats.
func TestWatchdogRetakeIsReported(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	logf := func(format string, args ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	sys := start(t, actor.Config{Schedulers: 1, Logger: logf})
	block := make(chan struct{})
	stuckDone := make(chan struct{}, 64)
	stuckRunning := make(chan struct{}, 64)
	otherDone := make(chan struct{}, 64)
	stuckBeh := actor.ActorFunc(func(*actor.Context, any) {
		stuckRunning <- struct{}{}
		<-block // outside the runtime: the watchdog must retake the role
		stuckDone <- struct{}{}
	})
	other, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) { otherDone <- struct{}{} }))
	const n = 5
	// A fresh stuck actor each round, on the live role, retaken while the
	// other actor's message waits.
	for i := range n {
		stuck, _ := sys.Spawn(stuckBeh)
		sys.Send(stuck, "go")
		// Only once the stuck handler holds the role does the other
		// actor's message have to wait for a retake; sent earlier, the
		// scheduler may run it first and no retake is due.
		<-stuckRunning
		sys.Send(other, "ping")
		select {
		case <-otherDone:
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the other actor never ran", i)
		}
		block <- struct{}{} // release it
		<-stuckDone
	}
	var retakes uint64
	for _, s := range sys.Stats().Schedulers {
		retakes += s.Retakes
	}
	mu.Lock()
	defer mu.Unlock()
	var reports []string
	for _, l := range lines {
		if strings.Contains(l, "watchdog") {
			reports = append(reports, l)
		}
	}
	if retakes < n || len(reports) == 0 {
		t.Fatalf("%d retakes, %d reports: %q", retakes, len(reports), lines)
	}
	if len(reports) >= int(retakes) && retakes > 1 {
		t.Fatalf("%d retakes within a second reported %d times, not rate-limited: %q", retakes, len(reports), reports)
	}
}

// TestWatchdogNamesTheActorOnReturn: the retake's report cannot name the
// actor, but once its handler returns the holder reports it, with its
// name, through Reporter (Context "returned"). An operations pass asked
// which actor held the role.
func TestWatchdogNamesTheActorOnReturn(t *testing.T) {
	var rs reportSink
	sys := start(t, actor.Config{Schedulers: 1, Reporter: rs.Report})
	block := make(chan struct{})
	running := make(chan struct{})
	stuck, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {
		close(running)
		<-block // outside the runtime
	}), actor.Name("hog"))
	if err != nil {
		t.Fatal(err)
	}
	otherDone := make(chan struct{})
	other, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) { close(otherDone) }))
	sys.Send(stuck, "go")
	<-running
	sys.Send(other, "ping")
	select {
	case <-otherDone: // the role was retaken
	case <-time.After(5 * time.Second):
		t.Fatal("the other actor never ran")
	}
	time.Sleep(30 * time.Millisecond) // well past WatchdogThreshold after the retake
	close(block)
	rep := rs.wait(t, 2)
	if r := rep[0]; r.Kind != actor.WatchdogReport || r.Context != "retake" || !r.Pid.IsZero() {
		t.Fatalf("first report %+v, want the retake", r)
	}
	r := rep[1]
	if r.Kind != actor.WatchdogReport || r.Context != "returned" || r.Pid != stuck || r.Name != "hog" || r.Scheduler != 0 {
		t.Fatalf("second report %+v, want hog's return", r)
	}
	if !strings.Contains(r.Text, "actor hog "+stuck.String()+" returned") {
		t.Fatalf("text %q", r.Text)
	}
}
