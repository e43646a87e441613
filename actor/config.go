package actor

import (
	"runtime"
	"time"
)

// Config configures a System. The zero Config is valid: every zero field
// takes the default documented on it.
type Config struct {
	// Schedulers is the number of scheduler roles, i.e. how many actor
	// handlers run at once. Default: GOMAXPROCS.
	Schedulers int
	// MaxActors is the slab capacity: how many actors may be live at once.
	// Spawning beyond it fails with ErrTooManyActors. Default: 1<<20.
	MaxActors int
	// Budget is how many messages one activation may handle before the
	// actor goes to the back of the run queue (Erlang's reductions).
	// Default: 64.
	Budget int
	// WatchdogThreshold is how long one activation may hold a scheduler role
	// before the watchdog hands the role to a fresh goroutine, so that a
	// handler that spins or blocks outside the runtime cannot starve the
	// other actors. Default: 10ms. Negative: no watchdog.
	WatchdogThreshold time.Duration
	// MaxSpareWorkers bounds the pool of idle goroutines kept for scheduler
	// hand-offs. Default: 2*Schedulers+4.
	MaxSpareWorkers int
	// Logger, if set, receives crash reports: one line per actor that exits
	// with a reason other than normal, shutdown or killed-by-shutdown.
	Logger func(format string, args ...any)
}

func (c Config) withDefaults() Config {
	if c.Schedulers <= 0 {
		c.Schedulers = runtime.GOMAXPROCS(0)
	}
	if c.MaxActors <= 0 {
		c.MaxActors = 1 << 20
	}
	if c.Budget <= 0 {
		c.Budget = 64
	}
	if c.WatchdogThreshold == 0 {
		c.WatchdogThreshold = 10 * time.Millisecond
	}
	if c.MaxSpareWorkers <= 0 {
		c.MaxSpareWorkers = 2*c.Schedulers + 4
	}
	return c
}
