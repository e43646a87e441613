package actor

import (
	"fmt"
	"log"
	"runtime"
	"time"
)

// Config configures a System. The zero Config is valid: every zero field
// takes the default documented on it. A negative count, or one past its
// limit, makes Start fail with ErrBadConfig.
type Config struct {
	// Schedulers is the number of scheduler roles, i.e. how many actor
	// handlers run at once. Default: GOMAXPROCS, at most 1024.
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
	// other actors. Each such retake is reported through Logger ("actor:
	// watchdog: ..."; at most one report a second, with the count of those
	// left out) and counted in SchedulerStats.Retakes: the handler keeps
	// its goroutine until it returns. When it does return, at least a
	// threshold later, a second report names its actor (the first cannot:
	// which actor a role runs is not recorded, to keep a store off every
	// activation). For blocking work in a handler, see Context.Blocking,
	// which hands the role on at once. Default: 10ms. Negative: no
	// watchdog.
	WatchdogThreshold time.Duration
	// MaxSpareWorkers bounds the pool of idle goroutines kept for scheduler
	// hand-offs. Default: 2*Schedulers+4.
	MaxSpareWorkers int
	// Logger receives crash reports, each in one call ("actor
	// <pid> exited: <reason>", then on the next lines the stack of a
	// panic): one for every handler panic (any actor; a Server's callbacks,
	// Init and Terminate included), and one for every Server that stops
	// with a reason other than normal or shutdown (an error from its Init
	// included), as proc_lib reports a gen_server's abnormal exit. A plain
	// actor's Stop or a kill is not reported (nor is a plain Erlang
	// process's exit/1), and neither is anything a killed actor's handler
	// does while it runs on (a panic, a Server's stop). The watchdog's
	// retakes are reported too (WatchdogThreshold). Packages built on
	// the System write their reports through it too (System.Report: the
	// supervisor's; System.Log). Default (nil): the log package's standard logger
	// (log.Printf), as for net/http.Server's ErrorLog, so that a crash is
	// never silent (OTP's logger prints these reports by default), unless
	// Reporter is set. To discard reports, give a func that does nothing;
	// for log/slog, see SlogLogger, or Reporter and SlogReporter for
	// structured records.
	Logger func(format string, args ...any)
	// Reporter, if set, receives each of the reports Logger does as a
	// Report, its fields typed (the actor, its name, the reason, a
	// supervisor's child, a panic's stack), before Logger gets its text.
	// With Reporter set and Logger nil, reports go to Reporter only. It is
	// called on the goroutine that writes the report (a scheduler's, in
	// the middle of an actor's death): it must not block for long.
	Reporter func(Report)

	// det switches the System to colonytest's deterministic mode (det.go);
	// set only through internal/detmode.
	det *detState
}

// Limits of Config's counts.
const (
	maxSchedulers = 1024
	maxActorsCap  = 1 << 31 // the slab's index space
)

// check reports a Config that Start must refuse, wrapping ErrBadConfig.
func (c Config) check() error {
	bad := func(field string, v int, why string) error {
		return fmt.Errorf("%w: %s %d %s", ErrBadConfig, field, v, why)
	}
	switch {
	case c.Schedulers < 0:
		return bad("Schedulers", c.Schedulers, "is negative (0 takes the default, GOMAXPROCS)")
	case c.Schedulers > maxSchedulers:
		return bad("Schedulers", c.Schedulers, "is more than 1024")
	case c.MaxActors < 0:
		return bad("MaxActors", c.MaxActors, "is negative (0 takes the default, 1<<20)")
	case c.MaxActors > maxActorsCap:
		return bad("MaxActors", c.MaxActors, "is more than 1<<31")
	case c.Budget < 0:
		return bad("Budget", c.Budget, "is negative (0 takes the default, 64)")
	case c.MaxSpareWorkers < 0:
		return bad("MaxSpareWorkers", c.MaxSpareWorkers, "is negative (0 takes the default)")
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Schedulers <= 0 {
		c.Schedulers = min(runtime.GOMAXPROCS(0), maxSchedulers)
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
	if c.Logger == nil && c.Reporter == nil {
		c.Logger = log.Printf
	}
	return c
}
