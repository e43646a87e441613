// Command cron is a cron-like job scheduler built on Colony, the OTP way.
//
// A rest_for_one supervisor owns a simple_one_for_one supervisor of job
// runners, then the scheduler, a gen_server under a registered name that
// holds the job definitions, their timers, the runs in flight and each
// job's history.
//
//   - Schedules: a job runs every Every (its first run by StartTimer, then a
//     SendInterval, which does not drift) or daily At a time of day (a
//     StartTimer re-armed at each run). Edits and pauses read what is left on
//     a timer (ReadTimer) before they cancel it (CancelTimer): a paused job
//     resumes with what was left, an edited one runs no later than it would
//     have. A tick already queued when its timer was cancelled is stale, and
//     dropped: StartTimer's message carries its own ref, SendInterval's a
//     generation.
//   - Runs: each run is a transient child of the runners' supervisor
//     (StartChildArgs), so a run whose Work panics is restarted (the same run
//     and attempt), and one that returns is not. At most MaxConcurrent runs
//     of a job at once; a due run past that is skipped and counted. A run
//     still going after MaxRun is killed by its supervisor (TerminateChildPid
//     with BrutalKill: an Exit with Kill would be restarted, the child being
//     transient) and reported once through Config.Reporter. A failed run is
//     retried up to Retries times, after Backoff, then twice that, ...
//   - The supervisor's Hooks count exits and restarts for metrics, and tell
//     the scheduler of each runner's death and whether it will be restarted.
//   - A priority lane: before it starts queued work (a tick, a retry,
//     a RunNow), the scheduler takes the Cancel and Pause calls waiting in its
//     mailbox with a selective receive (Context.Receive with a match func and
//     a zero timeout), so they overtake the work queued before them.
//   - The operator's view: Status and History are calls with a timeout;
//     System.Stats and System.Info describe the runtime and the scheduler.
//   - Shutdown stops the scheduler, then kills the runs in flight.
//
// `go run ./examples/cron` runs a short demo (about three seconds) whose
// reports are structured log/slog records (actor.SlogReporter).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
)

func demo(out io.Writer) error {
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "stack" {
				return slog.Attr{} // keep the demo's output short
			}
			return a
		},
	}))
	sys, err := actor.Start(actor.Config{Reporter: actor.SlogReporter(logger)})
	if err != nil {
		return err
	}
	defer sys.Shutdown(context.Background())
	cron, _, metrics, err := Start(sys, Options{})
	if err != nil {
		return err
	}
	const timeout = 5 * time.Second

	var beats atomic.Int64
	var crashed atomic.Bool
	jobs := []Job{
		{Name: "heartbeat", Every: 200 * time.Millisecond, Work: func(c *actor.Context, r Run) error {
			beats.Add(1)
			return c.Sleep(5 * time.Millisecond)
		}},
		{Name: "nightly", At: sinceMidnight(time.Now().Add(time.Second)), Work: func(c *actor.Context, r Run) error {
			fmt.Fprintf(out, "nightly: run %d at its time of day\n", r.ID)
			return nil
		}},
		{Name: "flaky", Every: time.Second, Retries: 3, Backoff: 50 * time.Millisecond, Work: func(c *actor.Context, r Run) error {
			if r.Attempt < 2 {
				return fmt.Errorf("upstream busy (attempt %d)", r.Attempt)
			}
			return nil
		}},
		{Name: "slow", Every: time.Hour, MaxRun: 100 * time.Millisecond, Work: func(c *actor.Context, r Run) error {
			return c.Sleep(time.Hour) // killed at MaxRun
		}},
		{Name: "crashy", Every: time.Hour, Work: func(c *actor.Context, r Run) error {
			if !crashed.Swap(true) {
				panic("first incarnation crashes")
			}
			return nil
		}},
		{Name: "backup", Every: time.Hour, Work: func(c *actor.Context, r Run) error {
			return c.Sleep(time.Hour) // in flight at Shutdown
		}},
	}
	for _, j := range jobs {
		if err := cron.Add(sys, j, timeout); err != nil {
			return err
		}
	}
	for _, name := range []string{"slow", "crashy"} {
		if err := cron.RunNow(sys, name); err != nil {
			return err
		}
	}
	time.Sleep(2200 * time.Millisecond) // the demo's pace, not a correctness wait

	if err := cron.Pause(sys, "heartbeat", timeout); err != nil {
		return err
	}
	if err := cron.Cancel(sys, "flaky", timeout); err != nil {
		return err
	}
	if err := cron.RunNow(sys, "backup"); err != nil {
		return err
	}
	st, err := cron.Status(sys, timeout)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "heartbeat ran %d times\n", beats.Load())
	for _, s := range st {
		fmt.Fprintf(out, "status %-9s paused=%-5v next=%-6v running=%d runs=%d ok=%d failed=%d crashed=%d killed=%d retried=%d skipped=%d\n",
			s.Name, s.Paused, s.NextIn.Round(time.Millisecond*100), s.Running, s.Runs, s.OK, s.Failed, s.Crashed, s.Killed, s.Retried, s.Skipped)
	}
	for _, name := range []string{"flaky", "slow", "crashy"} {
		h, err := cron.History(sys, name, timeout)
		if err != nil {
			return err
		}
		for _, e := range h {
			fmt.Fprintf(out, "history %-6s run %d attempt %d: %s %s\n", name, e.ID, e.Attempt, e.Outcome, e.Err)
		}
	}
	if _, err := cron.History(sys, "nope", timeout); !errors.Is(err, ErrNoJob) {
		return fmt.Errorf("history of an unknown job: %v", err)
	}
	s := sys.Stats()
	pid, _ := sys.Whereis(cron.Name)
	info, err := sys.Info(pid)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "runtime: %d actors, %d timers; scheduler %v handled %d messages, %d queued\n",
		s.Live, s.Timers, pid, info.Handled, info.MailboxLen)
	fmt.Fprintf(out, "runner metrics: exited=%d crashed=%d restarted=%d\n",
		metrics.Exited.Load(), metrics.Crashed.Load(), metrics.Restarted.Load())

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "shutdown with a run in flight took %v\n", time.Since(start).Round(10*time.Millisecond))
	return nil
}

// sinceMidnight is t's time of day, as Job.At wants it.
func sinceMidnight(t time.Time) time.Duration {
	y, m, d := t.Date()
	return t.Sub(time.Date(y, m, d, 0, 0, 0, 0, t.Location()))
}

func main() {
	if err := demo(os.Stdout); err != nil {
		log.Fatal(err)
	}
}
