package supervisor

import "time"

// intensity is OTP's restart-frequency rule (supervisor:add_restart/1): keep
// the restarts no older than period, add this one, and give up if more than
// max remain. It is a pure value so the model test can drive it with a fake
// clock. Owned by the supervisor's actor.
type intensity struct {
	max      int
	period   time.Duration
	restarts []time.Time // oldest first
}

// add records a restart at now and reports whether it is allowed.
func (in *intensity) add(now time.Time) bool {
	threshold := now.Add(-in.period)
	keep := in.restarts[:0]
	for _, t := range in.restarts {
		if !t.Before(threshold) {
			keep = append(keep, t)
		}
	}
	in.restarts = append(keep, now)
	return len(in.restarts) <= in.max
}

// shouldRestart is OTP's do_restart decision: whether a child with restart
// type r that exited with reason is restarted.
func shouldRestart(r Restart, reason any) bool {
	switch r {
	case Permanent:
		return true
	case Transient:
		return !isNormalExit(reason)
	}
	return false
}

// clock is the supervisors' time source; tests replace it before starting
// supervisors (the spawn orders the write before the actor's reads).
var clock = time.Now
