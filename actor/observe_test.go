package actor_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestObservationCountsExitsByReasonClass: every death is counted once,
// in the class of its reason, observed or not.
func TestObservationCountsExitsByReasonClass(t *testing.T) {
	sys := start(t, actor.Config{Logger: func(string, ...any) {}})
	before := sys.Observation().Exits
	stopWith := func(r actor.Reason) {
		t.Helper()
		pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			switch m := msg.(type) {
			case string:
				panic(m)
			case stopMsg:
				c.Stop(m.r)
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		w, err := sys.Monitor(pid)
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			sys.Send(pid, "boom")
		} else if r == actor.Kill {
			sys.Exit(pid, actor.Kill)
		} else {
			sys.Send(pid, stopMsg{r})
		}
		<-w.Done()
	}
	stopWith(actor.Normal)
	stopWith(actor.Normal)
	stopWith(actor.Shutdown)
	stopWith(actor.ShutdownWith{Reason: "drain"})
	stopWith(actor.Kill)
	stopWith(nil) // a panic
	stopWith(actor.Atom("bad_state"))
	got := sys.Observation().Exits
	want := actor.ExitCounts{
		Normal: before.Normal + 2, Shutdown: before.Shutdown + 2, Killed: before.Killed + 1,
		Panic: before.Panic + 1, Other: before.Other + 1,
	}
	if got != want {
		t.Fatalf("Exits = %+v, want %+v", got, want)
	}
	if got.Total() != before.Total()+7 {
		t.Fatalf("Total = %d, want %d", got.Total(), before.Total()+7)
	}
}

type stopMsg struct{ r actor.Reason }

// TestWatchReportsTeesCrashReports: a sink added after Start sees a crash
// report, and sees nothing once stopped.
func TestWatchReportsTeesCrashReports(t *testing.T) {
	sys := start(t, actor.Config{Logger: func(string, ...any) {}})
	var mu sync.Mutex
	var got []actor.Report
	stop := sys.WatchReports(func(r actor.Report) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	})
	crash := func() actor.Pid {
		pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) { panic("kaboom") }))
		w, _ := sys.Monitor(pid)
		sys.Send(pid, 1)
		<-w.Done()
		return pid
	}
	pid := crash()
	mu.Lock()
	if len(got) != 1 || got[0].Kind != actor.CrashReport || got[0].Pid != pid || !strings.Contains(got[0].Text, "kaboom") {
		t.Fatalf("reports = %+v, want one crash report of %v", got, pid)
	}
	mu.Unlock()
	stop()
	stop() // idempotent
	crash()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("a stopped sink got %d reports, want 1", len(got))
	}
}

// TestObserveSamplesHandlingAndLatency: while observing, a stream of
// messages fills both histograms; the counts are per message and the
// buckets add up to the count.
func TestObserveSamplesHandlingAndLatency(t *testing.T) {
	sys := start(t, actor.Config{})
	stop := sys.Observe()
	defer stop()
	done := make(chan struct{})
	const n = 20000
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if msg.(int) == n-1 {
			close(done)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		sys.Send(pid, i)
	}
	<-done
	eventually(t, 5*time.Second, "latency samples", func() bool {
		ob := sys.Observation()
		return ob.Handling.Count > 0 && ob.MailboxLatency.Count > 0
	})
	// The handled count is recorded when an activation ends, after the
	// handler of the last message closed done: wait for it.
	eventually(t, 5*time.Second, "the handled count", func() bool { return sys.Observation().Handled >= n })
	ob := sys.Observation()
	if ob.Handled != n {
		t.Fatalf("Handled = %d, want %d", ob.Handled, n)
	}
	for _, h := range []actor.Histogram{ob.Handling, ob.MailboxLatency} {
		var sum uint64
		for _, c := range h.Counts {
			sum += c
		}
		if sum != h.Count || len(h.Counts) != len(h.Bounds)+1 || h.Count > n {
			t.Fatalf("histogram %+v: buckets sum to %d, count %d, %d bounds", h, sum, h.Count, len(h.Bounds))
		}
	}
	if len(ob.Schedulers) != len(sys.Stats().Schedulers) {
		t.Fatalf("%d scheduler observations, %d schedulers", len(ob.Schedulers), len(sys.Stats().Schedulers))
	}
	eventually(t, 5*time.Second, "parked time", func() bool {
		for _, s := range sys.Observation().Schedulers {
			if s.Parked > 0 {
				return true
			}
		}
		return false
	})
}

// TestObserveOffRecordsNothing: without Observe, no sample is taken.
func TestObserveOffRecordsNothing(t *testing.T) {
	sys := start(t, actor.Config{})
	stop := sys.Observe()
	stop()
	done := make(chan struct{})
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if msg.(int) == 999 {
			close(done)
		}
	}))
	for i := 0; i < 1000; i++ {
		sys.Send(pid, i)
	}
	<-done
	ob := sys.Observation()
	if ob.Handling.Count != 0 || ob.MailboxLatency.Count != 0 || ob.Handled != 0 {
		t.Fatalf("samples taken while not observing: %d handling, %d latency", ob.Handling.Count, ob.MailboxLatency.Count)
	}
}

// TestBusyAndParkedTimeCountWithoutObserve: the schedulers' parked and
// busy time are counted from Start whether observed or not, add up to the
// time since Start, and a handler that keeps its scheduler busy shows in
// Busy, not in Parked.
func TestBusyAndParkedTimeCountWithoutObserve(t *testing.T) {
	before := time.Now()
	sys := start(t, actor.Config{Schedulers: 2})
	// Idle schedulers park: their parked time counts with nobody observing.
	eventually(t, 5*time.Second, "parked time on every scheduler", func() bool {
		for _, s := range sys.Observation().Schedulers {
			if s.Parked <= 0 {
				return false
			}
		}
		return true
	})
	busyOf := func(ob actor.Observation) (busy time.Duration) {
		for _, s := range ob.Schedulers {
			busy += s.Busy
		}
		return busy
	}
	ob0 := sys.Observation()
	for _, s := range ob0.Schedulers {
		if up := time.Since(before); s.Busy < 0 || s.Parked+s.Busy > up {
			t.Fatalf("scheduler %d: parked %v + busy %v is more than the %v since Start", s.ID, s.Parked, s.Busy, up)
		}
	}
	// A handler that runs for 100 ms without blocking.
	const spin = 100 * time.Millisecond
	done := make(chan struct{})
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {
		for t0 := time.Now(); time.Since(t0) < spin; {
		}
		close(done)
	}))
	sys.Send(pid, "spin")
	<-done
	if d := busyOf(sys.Observation()) - busyOf(ob0); d < spin {
		t.Fatalf("busy time grew by %v over a %v handler", d, spin)
	}
}

// TestScanPagesThroughLiveActors: Scan sees every live actor once, in
// pages that resume where the last stopped, and skips the dead.
func TestScanPagesThroughLiveActors(t *testing.T) {
	sys := start(t, actor.Config{MaxActors: 1 << 14})
	want := map[actor.Pid]bool{}
	for i := 0; i < 300; i++ {
		pid, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
		if err != nil {
			t.Fatal(err)
		}
		want[pid] = true
	}
	dead, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	w, _ := sys.Monitor(dead)
	sys.Exit(dead, actor.Kill)
	<-w.Done()
	seen := map[actor.Pid]bool{}
	pages := 0
	for cur := 0; cur != actor.ScanEnd; pages++ {
		n := 0
		cur = sys.Scan(cur, 64, func(s actor.ActorStat) bool {
			if seen[s.Pid] {
				t.Fatalf("%v seen twice", s.Pid)
			}
			if s.Slot < cur {
				t.Fatalf("slot %d before the cursor %d", s.Slot, cur)
			}
			if s.Memory <= 0 || s.State == "" {
				t.Fatalf("stat %+v", s)
			}
			seen[s.Pid] = true
			n++
			return true
		})
		if n > 64 {
			t.Fatalf("a page of 64 held %d", n)
		}
		if pages > 100 {
			t.Fatal("Scan does not end")
		}
	}
	if seen[dead] {
		t.Fatal("Scan saw a dead actor")
	}
	for pid := range want {
		if !seen[pid] {
			t.Fatalf("Scan missed %v", pid)
		}
	}
	if pages < 5 {
		t.Fatalf("%d pages for 300 actors at 64 a page", pages)
	}
	// Stopping early resumes after the last actor seen.
	var first actor.Pid
	next := sys.Scan(0, 0, func(s actor.ActorStat) bool { first = s.Pid; return false })
	sys.Scan(next, 1, func(s actor.ActorStat) bool {
		if s.Pid == first {
			t.Fatal("resumed scan repeated the actor it stopped at")
		}
		return true
	})
}

type heldThing struct{}

func (heldThing) Close() error { return nil }

// TestDetailListsLinksTimersAndResources.
func TestDetailListsLinksTimersAndResources(t *testing.T) {
	sys := start(t, actor.Config{})
	ready := make(chan actor.Pid, 1)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if x, ok := msg.(actor.Exit); ok {
			c.Stop(x.Reason)
		}
		if msg == "setup" {
			peer, _ := c.SpawnLink(actor.ActorFunc(func(*actor.Context, any) {}))
			c.SendAfter(c.Self(), "later", time.Hour)
			ready <- peer
		}
	}), actor.TrapExit())
	sys.Send(pid, "setup")
	peer := <-ready
	if _, err := sys.Hold(pid, heldThing{}); err != nil {
		t.Fatal(err)
	}
	d, err := sys.Detail(pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Links) != 1 || d.Links[0] != peer || d.Links[0] == pid {
		t.Fatalf("Links = %v, want [%v]", d.Links, peer)
	}
	if len(d.Timers) != 1 || d.Timers[0] <= 59*time.Minute || d.Timers[0] > time.Hour {
		t.Fatalf("Timers = %v, want one of about an hour", d.Timers)
	}
	if len(d.Resources) != 1 || !strings.Contains(d.Resources[0], "heldThing") {
		t.Fatalf("Resources = %v", d.Resources)
	}
	if d.Memory <= 0 || !d.TrapExit {
		t.Fatalf("detail %+v", d)
	}
	if _, err := sys.Detail(actor.Pid{}); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("Detail of the zero pid: %v", err)
	}
	if sys.Observation().Held < 1 {
		t.Fatal("Held does not count the held resource")
	}
}

// TestBlockedStackFindsTheBlockedHandler: a handler blocked in a Receive
// while stacks are observed shows its stack; once it returns, none.
func TestBlockedStackFindsTheBlockedHandler(t *testing.T) {
	sys := start(t, actor.Config{})
	// Observe alone labels nothing.
	stopObserve := sys.Observe()
	defer stopObserve()
	before, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) { c.Sleep(time.Minute) }))
	sys.Send(before, "block")
	eventually(t, 5*time.Second, "the first to block", func() bool {
		i, _ := sys.Info(before)
		return i.State == actor.StateBlocked
	})
	if _, ok := sys.BlockedStack(before); ok {
		t.Fatal("a stack of a block begun while stacks were not observed")
	}
	sys.Exit(before, actor.Kill)
	stop := sys.ObserveStacks()
	defer stop()
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		c.Receive(func(m any) bool { return m == "wake" }, time.Minute)
	}))
	sys.Send(pid, "block")
	var st string
	eventually(t, 5*time.Second, "the blocked stack", func() bool {
		var ok bool
		st, ok = sys.BlockedStack(pid)
		return ok
	})
	if !strings.Contains(st, "Receive") || !strings.Contains(st, "TestBlockedStackFindsTheBlockedHandler") {
		t.Fatalf("stack does not show the handler:\n%s", st)
	}
	sys.Send(pid, "wake")
	eventually(t, 5*time.Second, "the handler to resume", func() bool {
		_, ok := sys.BlockedStack(pid)
		return !ok
	})
	if _, ok := sys.BlockedStack(actor.Pid{}); ok {
		t.Fatal("a stack for the zero pid")
	}
}

// TestPeekMailboxOfADeadOrBadPid.
func TestPeekMailboxOfADeadOrBadPid(t *testing.T) {
	sys := start(t, actor.Config{})
	if _, err := sys.PeekMailbox(actor.Pid{}, 5, time.Second); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("zero pid: %v", err)
	}
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	w, _ := sys.Monitor(pid)
	sys.Exit(pid, actor.Kill)
	<-w.Done()
	if _, err := sys.PeekMailbox(pid, 5, time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("dead pid: %v", err)
	}
	live, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	msgs, err := sys.PeekMailbox(live, 5, 5*time.Second)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("an idle actor's peek: %v, %v", msgs, err)
	}
}
