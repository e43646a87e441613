package actor

import "time"

// watchdog retires scheduler roles stuck in one activation (see the design
// note in sched.go). It wakes every WatchdogThreshold/2; a role whose
// activation counter has not moved for two such periods while it is inside
// an activation is handed to a fresh worker.
func (sys *System) watchdog() {
	defer close(sys.wdDone)
	period := max(sys.cfg.WatchdogThreshold/2, time.Millisecond)
	t := time.NewTicker(period)
	defer t.Stop()
	last := make([]uint64, sys.nsched)
	stuck := make([]int, sys.nsched)
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
			if stuck[i]++; stuck[i] >= 2 {
				stuck[i] = 0
				sys.retake(i, s)
			}
		}
	}
}

// retake retires role s of index i and starts a fresh role on a new worker.
func (sys *System) retake(i int, s *sched) {
	ns := newSched(sys, i, s.st, s.pk)
	if !sys.roles[i].CompareAndSwap(s, ns) {
		return
	}
	// Retire, then drain: the stuck holder pushes, then checks retired.
	s.retired.Store(true)
	s.drainToGlobal()
	s.st.retakes.Add(1)
	s.st.activations.Add(s.act.Load() / 2)
	sys.startWorker(ns)
}
