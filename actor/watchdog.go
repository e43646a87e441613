package actor

import (
	"fmt"
	"time"
)

// watchdog retires scheduler roles stuck in one activation (see the design
// note in sched.go). It wakes every WatchdogThreshold/2; a role whose
// activation counter has not moved for three such periods while it is inside
// an activation, with other work waiting, is handed to a fresh worker.
//
// Why three periods and "work waiting": Go itself deschedules a busy
// goroutine for up to its 10ms time slice when more goroutines are runnable
// than there are Ps (a GC worker, the test's main goroutine). Retaking on
// such a pause adds a goroutine, which makes more such pauses: measured, a
// trigger-happy watchdog halved the stress test's throughput. A role that
// nobody is waiting for costs nothing by running long.
func (sys *System) watchdog() {
	defer close(sys.wdDone)
	period := max(sys.cfg.WatchdogThreshold/2, time.Millisecond)
	t := time.NewTicker(period)
	defer t.Stop()
	last := make([]uint64, sys.nsched)
	stuck := make([]int, sys.nsched)
	var rep retakeReports
	for {
		select {
		case <-sys.wdStop:
			return
		case <-t.C:
		}
		for i := range sys.roles {
			s := sys.roles[i].Load()
			a := s.act.Load()
			if a&1 == 0 || a != last[i] {
				last[i], stuck[i] = a, 0
				continue
			}
			if stuck[i]++; stuck[i] >= 3 && sys.workWaiting(s) {
				stuck[i] = 0
				if sys.retake(i, s, a) {
					rep.note(sys, i, time.Now())
				}
			}
		}
	}
}

// retake retires role s of index i, seen stuck in the activation whose
// counter value is a, and starts a fresh role on a new worker.
//
// The retirement must not land after the holder settled its chain of
// activations (sched.go, settleAct): by then the holder may be parked on index i's idle bit and permit, which the fresh
// role shares, and two goroutines parked on one bit take one wake between
// them (the other is never woken again). So the watchdog first claims the
// activation by CAS on its counter; the holder ends an activation by CAS
// too (chainAct, settleAct). Exactly one wins: either the activation is over and
// there is no retirement, or the holder's CAS fails and it gives the
// role up without ever parking on it.
func (sys *System) retake(i int, s *sched, a uint64) bool {
	// Under statsMu, Stats sees the index before the retake or after it,
	// never the retired role's count both in the total and in the role.
	sys.statsMu.Lock()
	s.retakeAt.Store(time.Now().UnixNano()) // before the CAS: see sched.retakeAt
	if !s.act.CompareAndSwap(a, a|actRetired) {
		sys.statsMu.Unlock()
		return false // the activation ended meanwhile
	}
	// Count the retired role's activations (the stuck one included) before
	// Stats can see the fresh role's zero counter.
	s.st.activations.Add((a + 1) / 2)
	ns := newSched(sys, i, s.st, s.pk)
	sys.roles[i].Store(ns) // only the watchdog replaces roles
	sys.statsMu.Unlock()
	// Retire, then drain: the stuck holder pushes, then checks retired.
	s.retired.Store(true)
	s.drainToGlobal()
	s.st.retakes.Add(1)
	sys.startWorker(ns)
	return true
}

// retakeReports rate-limits the watchdog's reports: a retake means a
// handler spinning or blocked outside the runtime (its goroutine stays
// with it), which an operator needs to hear of, but a handler that does
// it on every message must not flood the log. The first retake is
// reported at once, later ones at most once per retakeReportEvery, with
// the count of those not reported. The watchdog's own is its goroutine's
// alone; System.heldReports (retaken's) is under System.heldMu.
type retakeReports struct {
	last    time.Time
	skipped int
}

const retakeReportEvery = time.Second

// allow reports whether a report is due at now, counting one left out if
// not; skipped is the count of those left out since the last one.
func (r *retakeReports) allow(now time.Time) (skipped int, ok bool) {
	if !r.last.IsZero() && now.Sub(r.last) < retakeReportEvery {
		r.skipped++
		return 0, false
	}
	skipped = r.skipped
	r.last, r.skipped = now, 0
	return skipped, true
}

func (r *retakeReports) note(sys *System, idx int, now time.Time) {
	skipped, ok := r.allow(now)
	if !ok {
		return
	}
	more := ""
	if skipped > 0 {
		more = fmt.Sprintf(" (%d more retakes since the last report)", skipped)
	}
	sys.Report(Report{Kind: WatchdogReport, Context: "retake", Scheduler: idx, Text: fmt.Sprintf(
		"actor: watchdog: scheduler %d ran one handler for over %v with work waiting; "+
			"its role went to a fresh worker (a handler spinning or blocked outside the runtime keeps its goroutine; Stats.Schedulers[].Retakes counts these)%s",
		idx, sys.cfg.WatchdogThreshold, more)})
}

// workWaiting reports whether some actor is queued that s might be holding
// up, or a timer is due: a role that arms a timer while the others are
// parked with none armed is the one expected to poll the wheel (no role
// parked as timekeeper), and if its handler then blocks outside the
// runtime nobody else would (TestTimerFiresWhileArmingHandlerBlocksOutside;
// the timer never fired while the handler blocked).
func (sys *System) workWaiting(s *sched) bool {
	return s.next.Peek() != 0 || s.local.Len() > 0 || sys.global.Len() > 0 || sys.timerDue()
}

// retaken reports, on the retired role's holder, the actor whose handler
// returned after the watchdog handed the role on: the watchdog's own
// report cannot name it (the actor a role runs is not recorded per
// activation: a store on the hot path), but the holder knows it once the
// handler returns. A handler that never returns is never named.
//
// The activation that ends with the failed chainAct is the one the
// watchdog saw stuck, unless the role stalled between two activations (a
// long timer poll; see the activation counter's note in sched.go): the
// next actor then ran on the retired role and is blamed for nothing it
// did. So only a handler that returned at least WatchdogThreshold after
// the retake is reported: one that held the role that long itself.
// Reports share the watchdog's rate limit rule, on a lock of their own.
func (sys *System) retaken(s *sched, pid Pid) {
	now := time.Now()
	late := now.Sub(time.Unix(0, s.retakeAt.Load()))
	if late < sys.cfg.WatchdogThreshold {
		return
	}
	sys.heldMu.Lock()
	skipped, ok := sys.heldReports.allow(now)
	sys.heldMu.Unlock()
	if !ok {
		return
	}
	more := ""
	if skipped > 0 {
		more = fmt.Sprintf(" (%d more since the last report)", skipped)
	}
	rep := Report{Kind: WatchdogReport, Context: "returned", Pid: pid, Scheduler: s.id}
	who := sys.nameReport(&rep)
	rep.Text = fmt.Sprintf("actor: watchdog: actor %s returned from the handler that held scheduler %d, %v after its role was handed on "+
		"(the handler spun or blocked outside the runtime for over %v)%s",
		who, s.id, late.Round(time.Millisecond), sys.cfg.WatchdogThreshold+late.Round(time.Millisecond), more)
	sys.Report(rep)
}
