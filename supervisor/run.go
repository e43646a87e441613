package supervisor

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Run is the application entry point: it starts a System, starts the tree
// described by spec, and blocks until ctx is done, SIGINT or SIGTERM
// arrives, or the top supervisor dies (it gave up: too many restarts or an
// auto_shutdown). It then stops the System in order — the top supervisor
// gets an exit signal with reason Shutdown and stops its children in
// reverse order, each by its shutdown protocol — bounded by stopTimeout.
// It returns the start error; ErrGaveUp if the top supervisor stopped
// because its restart intensity was exceeded (a crash loop: a service should
// exit with an error, as a permanent OTP application's failure stops the
// node; an auto_shutdown is a normal end and returns nil); the Shutdown
// error if the tree did not stop in time; or nil. A nil ctx is
// actor.ErrNilContext and a negative stopTimeout actor.ErrNegativeTimeout
// (actor.Infinity waits for the tree however long it takes); either way
// nothing is started.
func Run(ctx context.Context, cfg actor.Config, spec Spec, stopTimeout time.Duration) error {
	if ctx == nil {
		return actor.ErrNilContext
	}
	if stopTimeout < 0 {
		return actor.ErrNegativeTimeout
	}
	sys, err := actor.Start(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Give SIGINT and SIGTERM back before the stop: a second Ctrl-C while
	// a shutdown hangs then ends the process, as it would without Run
	// (instead of being swallowed until stopTimeout).
	return runSystem(ctx, sys, spec, stopTimeout, stop)
}

// RunSystem is Run on a System the caller started, so that code outside the
// tree can reach it while it runs: calls from HTTP handlers, a listener's
// address for a log line, checks in a test (give spec a Name to find the
// top supervisor). Unlike Run it leaves signals to the caller: ctx is the
// only stop request (wrap it with signal.NotifyContext, or stop an HTTP
// server first and then cancel it). It shuts sys down before it returns, as
// Run does, and returns what Run returns; ErrNilSystem for a nil sys.
// Refused arguments (a nil ctx or sys, a negative stopTimeout) start
// nothing and leave sys running.
func RunSystem(ctx context.Context, sys *actor.System, spec Spec, stopTimeout time.Duration) error {
	if ctx == nil {
		return actor.ErrNilContext
	}
	if stopTimeout < 0 {
		return actor.ErrNegativeTimeout
	}
	if sys == nil {
		return actor.ErrNilSystem
	}
	return runSystem(ctx, sys, spec, stopTimeout, func() {})
}

// runSystem is Run's and RunSystem's body; beforeStop runs when the stop
// begins.
func runSystem(ctx context.Context, sys *actor.System, spec Spec, stopTimeout time.Duration, beforeStop func()) error {
	// Learn whether the top supervisor gave up, keeping the caller's hook.
	var gaveUp atomic.Bool
	hooks := Hooks{}
	if spec.Hooks != nil {
		hooks = *spec.Hooks
	}
	userGaveUp := hooks.GaveUp
	hooks.GaveUp = func(sup actor.Pid) {
		gaveUp.Store(true)
		if userGaveUp != nil {
			userGaveUp(sup)
		}
	}
	spec.Hooks = &hooks
	shutdown := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		return sys.Shutdown(sctx)
	}
	top, err := Start(sys, spec)
	if err != nil {
		shutdown()
		return err
	}
	// The top's exit, seen through a monitor from outside (it polled
	// Alive every 50 ms).
	w, err := sys.Monitor(top)
	if err != nil {
		shutdown()
		return err
	}
	select {
	case <-ctx.Done():
	case <-w.Done():
	}
	beforeStop()
	err = shutdown()
	if gaveUp.Load() {
		// Else it would return nil, and a crash-looping service would
		// exit cleanly.
		return errors.Join(ErrGaveUp, err)
	}
	return err
}
