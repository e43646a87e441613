package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Liveness bounds only: generous, so a loaded machine is slow, not failing.
// No test sleeps for correctness: lower bounds on time come from timers,
// which are never early; the sleeps below pace polls.
const (
	patience = 20 * time.Second
	poll     = 2 * time.Millisecond
	timeout  = patience // for the scheduler's calls
)

type env struct {
	t       *testing.T
	sys     *actor.System
	cron    Cron
	metrics *Metrics

	mu      sync.Mutex
	reports []actor.Report
}

// setup starts a System and the service; at the end it checks that Shutdown
// is clean and leaves no goroutine behind.
func setup(t *testing.T) *env {
	t.Helper()
	before := goleak.IgnoreCurrent()
	e := &env{t: t}
	sys, err := actor.Start(actor.Config{Reporter: func(r actor.Report) {
		e.mu.Lock()
		e.reports = append(e.reports, r)
		e.mu.Unlock()
		t.Log(r.Text)
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.sys = sys
	e.cron, _, e.metrics, err = Start(sys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		goleak.VerifyNone(t, before)
	})
	return e
}

func (e *env) add(j Job) {
	e.t.Helper()
	if err := e.cron.Add(e.sys, j, timeout); err != nil {
		e.t.Fatalf("Add %s: %v", j.Name, err)
	}
}

func (e *env) history(name string) []Entry {
	e.t.Helper()
	h, err := e.cron.History(e.sys, name, timeout)
	if err != nil {
		e.t.Fatalf("History %s: %v", name, err)
	}
	return h
}

func (e *env) status(name string) (JobStatus, bool) {
	e.t.Helper()
	st, err := e.cron.Status(e.sys, timeout)
	if err != nil {
		e.t.Fatalf("Status: %v", err)
	}
	for _, s := range st {
		if s.Name == name {
			return s, true
		}
	}
	return JobStatus{}, false
}

func (e *env) reportsOf(context, job string) (n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.reports {
		if r.Context == context && (job == "" || r.ChildID == job) {
			n++
		}
	}
	return n
}

// eventually polls cond until it holds, failing the test after patience.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	for deadline := time.Now().Add(patience); !cond(); time.Sleep(poll) {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// counter is a Work that counts its runs and notes when each started.
type counter struct {
	mu     sync.Mutex
	starts []time.Time
}

func (k *counter) work(c *actor.Context, r Run) error {
	k.mu.Lock()
	k.starts = append(k.starts, time.Now())
	k.mu.Unlock()
	return nil
}

func (k *counter) n() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.starts)
}

func TestDemo(t *testing.T) {
	var b strings.Builder
	if err := demo(&b); err != nil {
		t.Fatalf("demo: %v\n%s", err, b.String())
	}
	out := b.String()
	for _, want := range []string{"context=job_overrun", "nightly: run", "history slow   run 1 attempt 0: killed",
		"attempt 2: ok", "crashed panic: first incarnation crashes", "shutdown with a run in flight"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// An Every job runs once per interval, never early; once Cancel returns it
// never runs again, while another job goes on.
func TestIntervalRunsAndCancel(t *testing.T) {
	e := setup(t)
	const every = 40 * time.Millisecond
	var a, b counter
	t0 := time.Now()
	e.add(Job{Name: "a", Every: every, Work: a.work})
	e.add(Job{Name: "b", Every: every, Work: b.work})
	e.eventually("6 runs of a", func() bool { return a.n() >= 6 })
	if err := e.cron.Cancel(e.sys, "a", timeout); err != nil {
		t.Fatal(err)
	}
	tc := time.Now()
	after := a.n()
	a.mu.Lock()
	for k, s := range a.starts {
		// The k-th run (from 0) is due (k+1)*every after Add, no sooner.
		if due := t0.Add(time.Duration(k+1) * every); s.Before(due) {
			t.Errorf("run %d of a started %v early", k, due.Sub(s))
		}
	}
	a.mu.Unlock()
	// b runs 5 more times, which takes 5 intervals at least: a had its
	// chances to run again, and must not have taken them.
	nb := b.n()
	e.eventually("5 more runs of b", func() bool { return b.n() >= nb+5 })
	if a.n() != after {
		t.Fatalf("a ran %d times after Cancel returned", a.n()-after)
	}
	if _, ok := e.status("a"); ok {
		t.Fatal("a cancelled job is still in Status")
	}
	for _, en := range e.history("a") {
		if en.Started.After(tc) {
			t.Fatalf("history of a has a run started after Cancel: %+v", en)
		}
	}
	// b never ran more often than its interval allows.
	if n, most := b.n(), int(time.Since(t0)/every); n > most {
		t.Fatalf("b ran %d times in %v, at most %d are due", n, time.Since(t0), most)
	}
	if err := e.cron.Cancel(e.sys, "a", timeout); !errors.Is(err, ErrNoJob) {
		t.Fatalf("second Cancel: %v, want ErrNoJob", err)
	}
}

// A daily job runs once at its time of day, and is then due a day later.
func TestDaily(t *testing.T) {
	now := time.Now()
	if sinceMidnight(now) > 24*time.Hour-5*time.Second {
		t.Skip("too close to midnight for a daily job in the next second")
	}
	e := setup(t)
	var k counter
	at := sinceMidnight(now.Add(150 * time.Millisecond))
	e.add(Job{Name: "daily", At: at, Work: k.work})
	e.eventually("the daily run", func() bool { return k.n() == 1 })
	if s := k.starts[0]; sinceMidnight(s) < at {
		t.Fatalf("the daily run started %v early", at-sinceMidnight(s))
	}
	st, _ := e.status("daily")
	if st.Runs != 1 || st.NextIn < 23*time.Hour {
		t.Fatalf("status after the daily run: %+v", st)
	}
}

func TestUntilNext(t *testing.T) {
	day := time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		now     time.Time
		at, out time.Duration
	}{
		{day.Add(time.Hour), 2 * time.Hour, time.Hour},
		{day.Add(2 * time.Hour), 2 * time.Hour, 24 * time.Hour}, // due now: tomorrow
		{day.Add(23 * time.Hour), time.Hour, 2 * time.Hour},     // past midnight
	} {
		if got := untilNext(c.now, c.at); got != c.out {
			t.Errorf("untilNext(%v, %v) = %v, want %v", c.now, c.at, got, c.out)
		}
	}
}

// A run past its MaxRun is killed, not restarted, and reported once.
func TestOverrunKilledAndReportedOnce(t *testing.T) {
	e := setup(t)
	var runs atomic.Int64
	e.add(Job{Name: "slow", Every: time.Hour, MaxRun: 30 * time.Millisecond, Work: func(c *actor.Context, r Run) error {
		runs.Add(1)
		return c.Sleep(time.Hour)
	}})
	var k counter
	e.add(Job{Name: "other", Every: time.Hour, Work: k.work})
	t0 := time.Now()
	if err := e.cron.RunNow(e.sys, "slow"); err != nil {
		t.Fatal(err)
	}
	e.eventually("the kill", func() bool { return len(e.history("slow")) == 1 })
	h := e.history("slow")
	if h[0].Outcome != Killed || h[0].Ended.Sub(t0) < 30*time.Millisecond {
		t.Fatalf("history: %+v", h)
	}
	// Another run goes through the scheduler and the runners' supervisor
	// after the kill: any late report, restart or run would be seen by then.
	e.cron.RunNow(e.sys, "other")
	e.eventually("the other run", func() bool { return len(e.history("other")) == 1 })
	if n := e.reportsOf("job_overrun", "slow"); n != 1 {
		t.Fatalf("%d overrun reports, want 1", n)
	}
	if n := e.reportsOf("exited", ""); n != 0 {
		t.Fatalf("%d crash reports for a killed run", n)
	}
	if runs.Load() != 1 || e.metrics.Restarted.Load() != 0 {
		t.Fatalf("the killed run ran %d times, %d restarts", runs.Load(), e.metrics.Restarted.Load())
	}
	st, _ := e.status("slow")
	if st.Running != 0 || st.Killed != 1 {
		t.Fatalf("status: %+v", st)
	}
	runners, _ := e.sys.Whereis(e.cron.Name + ".runners")
	if c, err := supervisor.CountChildren(e.sys, runners); err != nil || c.Active != 0 {
		t.Fatalf("runners left: %+v %v", c, err)
	}
}

// A failed run is retried, each retry after twice the backoff of the one
// before; a run that fails every time is tried Retries+1 times, then given up.
func TestRetriesBackOff(t *testing.T) {
	e := setup(t)
	const backoff = 30 * time.Millisecond
	e.add(Job{Name: "flaky", Every: time.Hour, Retries: 5, Backoff: backoff, Work: func(c *actor.Context, r Run) error {
		if r.Attempt < 3 {
			return fmt.Errorf("attempt %d fails", r.Attempt)
		}
		return nil
	}})
	e.add(Job{Name: "broken", Every: time.Hour, Retries: 1, Backoff: backoff, Work: func(c *actor.Context, r Run) error {
		return errors.New("always")
	}})
	e.cron.RunNow(e.sys, "broken")
	e.cron.RunNow(e.sys, "flaky")
	e.eventually("flaky's success", func() bool { return len(e.history("flaky")) == 4 })
	h := e.history("flaky")
	for i, en := range h {
		want := Failed
		if i == 3 {
			want = OK
		}
		if en.Attempt != i || en.Outcome != want {
			t.Fatalf("entry %d: %+v", i, en)
		}
		if i > 0 {
			if gap, min := en.Started.Sub(h[i-1].Ended), backoff<<(i-1); gap < min {
				t.Fatalf("retry %d came %v after the failure, before its backoff %v", i, gap, min)
			}
		}
	}
	// broken's two tries (30 ms apart) are done, or soon are: flaky's
	// three backoffs took 210 ms.
	e.eventually("broken's two tries", func() bool { return len(e.history("broken")) == 2 })
	hb := e.history("broken")
	if len(hb) != 2 || hb[0].Outcome != Failed || hb[1].Outcome != Failed || hb[1].Attempt != 1 {
		t.Fatalf("broken: %+v", hb)
	}
	if st, _ := e.status("flaky"); st.Runs != 4 || st.Retried != 3 || st.OK != 1 || st.Failed != 3 {
		t.Fatalf("flaky status: %+v", st)
	}
}

// A run whose Work panics is restarted by its supervisor: the same run and
// attempt, in a new runner.
func TestCrashedRunRestarted(t *testing.T) {
	e := setup(t)
	var incarnations atomic.Int64
	e.add(Job{Name: "crashy", Every: time.Hour, Work: func(c *actor.Context, r Run) error {
		if incarnations.Add(1) == 1 {
			panic("boom")
		}
		return nil
	}})
	e.cron.RunNow(e.sys, "crashy")
	e.eventually("the restarted run", func() bool { return len(e.history("crashy")) == 2 })
	h := e.history("crashy")
	if h[0].Outcome != Crashed || h[1].Outcome != OK || h[0].Run != h[1].Run || !strings.Contains(h[0].Err, "boom") {
		t.Fatalf("history: %+v", h)
	}
	if e.metrics.Restarted.Load() != 1 || e.reportsOf("exited", "") != 1 {
		t.Fatalf("restarts %d, crash reports %d", e.metrics.Restarted.Load(), e.reportsOf("exited", ""))
	}
	if st, _ := e.status("crashy"); st.Runs != 1 || st.Crashed != 1 || st.OK != 1 {
		t.Fatalf("status: %+v", st)
	}
}

// No more than MaxConcurrent runs of a job at once; the ticks past it are
// skipped and counted.
func TestMaxConcurrent(t *testing.T) {
	e := setup(t)
	var now, most atomic.Int64
	e.add(Job{Name: "busy", Every: 10 * time.Millisecond, MaxConcurrent: 2, Work: func(c *actor.Context, r Run) error {
		n := now.Add(1)
		defer now.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return c.Sleep(100 * time.Millisecond)
	}})
	e.eventually("skipped ticks", func() bool {
		st, _ := e.status("busy")
		return st.Skipped >= 5 && st.OK >= 2
	})
	if err := e.cron.Cancel(e.sys, "busy", timeout); err != nil {
		t.Fatal(err)
	}
	if most.Load() > 2 {
		t.Fatalf("%d runs at once, MaxConcurrent 2", most.Load())
	}
}

// caller calls f from an actor and waits until that actor is blocked in the
// call, so the call's request is in the scheduler's mailbox; the returned
// channel gets f's error.
func (e *env) caller(f func(c *actor.Context) error) <-chan error {
	e.t.Helper()
	ch := make(chan error, 1)
	pid, err := e.sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		ch <- f(c)
		c.Stop(actor.Normal)
	}))
	if err != nil {
		e.t.Fatal(err)
	}
	e.sys.Send(pid, "go")
	e.eventually("the caller blocked in its call", func() bool {
		info, err := e.sys.Info(pid)
		return err == nil && info.State == actor.StateBlocked
	})
	return ch
}

func recv(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(patience):
		t.Fatal("a call never returned")
		return nil
	}
}

// Cancel and Pause overtake the work queued before them.
func TestPriorityOvertakesQueuedWork(t *testing.T) {
	e := setup(t)
	var x, y counter
	e.add(Job{Name: "x", Every: time.Hour, Work: x.work})
	e.add(Job{Name: "y", Every: time.Hour, Work: y.work})
	sched, _ := e.sys.Whereis(e.cron.Name)
	e.sys.Send(sched, freeze{})
	// While frozen, a call times out: the caller is not stuck.
	if _, err := e.cron.History(e.sys, "x", 20*time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("History of a frozen scheduler: %v", err)
	}
	for range 3 {
		e.cron.RunNow(e.sys, "x")
		e.cron.RunNow(e.sys, "y")
	}
	cancelled := e.caller(func(c *actor.Context) error { return e.cron.Cancel(c, "x", timeout) })
	paused := e.caller(func(c *actor.Context) error { return e.cron.Pause(c, "y", timeout) })
	e.sys.Send(sched, thaw{})
	if err := recv(t, cancelled); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, paused); err != nil {
		t.Fatal(err)
	}
	// The RunNows are handled after the commands: a Status call queued
	// after them is answered after them.
	st, ok := e.status("y")
	if x.n() != 0 || y.n() != 0 || len(e.history("x")) != 0 || !ok || !st.Paused || st.Runs != 0 || st.Skipped != 3 {
		t.Fatalf("x ran %d times, y %d times; y's status %+v", x.n(), y.n(), st)
	}
}

// Pause keeps what was left on the timer; Resume re-arms it; Update keeps the
// counters and runs no later than the old timer would have.
func TestPauseResumeUpdate(t *testing.T) {
	e := setup(t)
	const every = 50 * time.Millisecond
	var p, clock counter
	e.add(Job{Name: "p", Every: every, Work: p.work})
	e.add(Job{Name: "clock", Every: 10 * time.Millisecond, Work: clock.work})
	e.eventually("2 runs of p", func() bool { return p.n() >= 2 })
	if err := e.cron.Pause(e.sys, "p", timeout); err != nil {
		t.Fatal(err)
	}
	n := p.n()
	st, _ := e.status("p")
	if !st.Paused || st.NextIn <= 0 || st.NextIn > every {
		t.Fatalf("paused status: %+v", st)
	}
	nc := clock.n()
	e.eventually("clock to run 3 intervals of p", func() bool { return clock.n() >= nc+15 })
	if p.n() != n {
		t.Fatalf("p ran %d times while paused", p.n()-n)
	}
	if err := e.cron.Resume(e.sys, "p", timeout); err != nil {
		t.Fatal(err)
	}
	e.eventually("p to run again", func() bool { return p.n() >= n+2 })

	// A slower schedule: the next run is still due within the old interval,
	// and the one after it an hour later.
	if err := e.cron.Update(e.sys, Job{Name: "p", Every: time.Hour, Work: p.work}, timeout); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.status("p"); st.NextIn > every || st.Runs < n+2 {
		t.Fatalf("status after Update: %+v", st)
	}
	n = p.n()
	e.eventually("p's run on its old time", func() bool { return p.n() == n+1 })
	e.eventually("p's next run an hour away", func() bool {
		st, _ := e.status("p")
		return st.NextIn > 59*time.Minute
	})

	for _, bad := range []Job{
		{Name: "p", Every: time.Second, Work: p.work},                // taken
		{Name: "q", Work: p.work},                                    // no schedule
		{Name: "q", Every: time.Second, At: time.Hour, Work: p.work}, // two
		{Name: "q", Every: time.Second},                              // no Work
		{Name: "q", At: 25 * time.Hour, Work: p.work},                // not a time of day
		{Name: "q", Every: time.Second, Retries: -1, Work: p.work},   // negative
		{Name: "q", Every: time.Second, MaxConcurrent: -1, Work: p.work},
	} {
		if err := e.cron.Add(e.sys, bad, timeout); !errors.Is(err, ErrBadJob) && !errors.Is(err, ErrJobExists) {
			t.Errorf("Add %+v: %v", bad, err)
		}
	}
	if err := e.cron.Update(e.sys, Job{Name: "nope", Every: time.Second, Work: p.work}, timeout); !errors.Is(err, ErrNoJob) {
		t.Fatalf("Update of an unknown job: %v", err)
	}
}

// Shutdown with runs in flight stops them and returns, leaving nothing.
func TestShutdownWithRunsInFlight(t *testing.T) {
	e := setup(t)
	e.add(Job{Name: "long", Every: time.Hour, MaxConcurrent: 3, Work: func(c *actor.Context, r Run) error {
		return c.Sleep(time.Hour)
	}})
	for range 3 {
		e.cron.RunNow(e.sys, "long")
	}
	e.eventually("3 runs in flight", func() bool {
		st, _ := e.status("long")
		return st.Running == 3
	})
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := e.sys.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if s := e.sys.Stats(); s.Live != 0 || s.Timers != 0 {
		t.Fatalf("after Shutdown: %d actors, %d timers", s.Live, s.Timers)
	}
}
