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
// error if the tree did not stop in time; or nil.
func Run(ctx context.Context, cfg actor.Config, spec Spec, stopTimeout time.Duration) error {
	if ctx == nil {
		return actor.ErrNilContext
	}
	sys, err := actor.Start(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
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
	top, err := Start(sys, spec)
	if err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		sys.Shutdown(sctx)
		return err
	}
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case <-ticker.C:
			if !sys.Alive(top) {
				break wait
			}
		}
	}
	// Give SIGINT and SIGTERM back before the stop: a second Ctrl-C while
	// a shutdown hangs then ends the process, as it would without Run (it
	// was swallowed until stopTimeout; noticed in review).
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	err = sys.Shutdown(sctx)
	if gaveUp.Load() {
		// It returned nil, so a crash-looping service exited cleanly
		// (noticed in review).
		return errors.Join(ErrGaveUp, err)
	}
	return err
}
