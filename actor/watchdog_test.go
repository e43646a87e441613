package actor_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testlog"
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

// The watchdog: on a 1-scheduler System, one handler spins in a CPU loop and
// another blocks in time.Sleep and a plain channel receive, outside the
// runtime; a third actor must keep answering calls.
func TestWatchdogKeepsOthersRunning(t *testing.T) {
	for _, scheds := range []int{1, 2} {
		var sink testlog.Sink
		sys := start(t, actor.Config{Schedulers: scheds, Logger: sink.Log})
		release := make(chan struct{})
		var spinStop atomic.Bool
		var stuck atomic.Int32
		spin, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			stuck.Add(1)
			for !spinStop.Load() {
			}
		}))
		sleeper, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			stuck.Add(1)
			for !spinStop.Load() {
				time.Sleep(10 * time.Millisecond)
			}
		}))
		blocker, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			stuck.Add(1)
			<-release
		}))
		echo, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if r, ok := msg.(actor.Request); ok {
				c.Reply(r, r.Msg)
			}
		}))
		for _, p := range []actor.Pid{spin, sleeper, blocker} {
			sys.Send(p, "go")
		}
		eventually(t, 5*time.Second, "the three handlers stuck", func() bool { return stuck.Load() == 3 })
		// They stay stuck until released below, so every call answered
		// here was answered beside them.
		for i := 0; i < 20; i++ {
			v, err := actor.Call[int](sys, echo, i, 10*time.Second)
			if err != nil || v != i {
				t.Fatalf("scheds=%d: call %d: %v %v", scheds, i, v, err)
			}
		}
		st := sys.Stats()
		var retakes uint64
		for _, s := range st.Schedulers {
			retakes += s.Retakes
		}
		if retakes == 0 {
			t.Errorf("scheds=%d: no Retakes counted with three stuck handlers: %+v", scheds, st)
		}
		inf, err := sys.Info(spin)
		t.Logf("scheds=%d: retakes=%d workers=%d spin info %+v %v; log %q", scheds, retakes, st.Workers, inf, err, sink.All())
		spinStop.Store(true)
		close(release)
	}
}
