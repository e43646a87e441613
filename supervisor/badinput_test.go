package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// TestStartFuncForeignPidFailsTheStart: a StartFunc that returns a pid its
// supervisor cannot supervise (another System's) fails the child's start
// with an error that is actor.ErrBadPid, and the supervisor stays
// responsive. (It was taken as the running child; stopping it then hung
// the supervisor for ever: the monitor of a malformed pid fails, and the
// stop waited for a Down that could never come, past the kill.)
func TestStartFuncForeignPidFailsTheStart(t *testing.T) {
	quiet := actor.Config{Schedulers: 2, Logger: func(string, ...any) {}}
	sys := testsys.Start(t, quiet)
	other := testsys.Start(t, quiet)
	foreign, err := other.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err != nil {
		t.Fatal(err)
	}
	start := func(*actor.Context, ...any) (actor.Pid, error) { return foreign, nil }
	spec := supervisor.ChildSpec{ID: "w", Start: start, Shutdown: 50 * time.Millisecond}

	top, err := supervisor.Start(sys, supervisor.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		pid actor.Pid
		err error
	}
	done := make(chan result, 1)
	go func() {
		pid, err := supervisor.StartChild(sys, top, spec)
		if err == nil {
			// Taken: the stop is where it hung.
			err = supervisor.TerminateChild(sys, top, "w")
			if err == nil {
				err = errors.New("StartChild and TerminateChild succeeded")
			}
		}
		done <- result{pid, err}
	}()
	select {
	case r := <-done:
		var cse *supervisor.ChildStartError
		if !errors.As(r.err, &cse) || !errors.Is(r.err, actor.ErrBadPid) {
			t.Fatalf("StartChild of a StartFunc returning another System's pid: %v, %v; want a *ChildStartError that is actor.ErrBadPid", r.pid, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the supervisor hung stopping a child whose pid is another System's")
	}
	if n, err := supervisor.CountChildren(sys, top); err != nil || n.Specs != 0 {
		t.Fatalf("CountChildren after the failed start: %+v, %v; want no spec kept", n, err)
	}
	// At the supervisor's own start, and for a dynamic child, likewise.
	if _, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{spec}}); !errors.Is(err, actor.ErrBadPid) {
		t.Errorf("supervisor.Start with such a child: %v, want an error that is actor.ErrBadPid", err)
	}
	simple, err := supervisor.Start(sys, supervisor.Spec{Strategy: supervisor.SimpleOneForOne, Children: []supervisor.ChildSpec{spec}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := supervisor.StartChildArgs(sys, simple); !errors.Is(err, actor.ErrBadPid) {
		t.Errorf("StartChildArgs of such a template: %v, want an error that is actor.ErrBadPid", err)
	}
	if !other.Alive(foreign) {
		t.Error("the other System's actor was touched")
	}
}

// TestRunNegativeStopTimeoutRefused: Run and RunSystem with a negative
// stopTimeout return actor.ErrNegativeTimeout and start nothing, as with a
// nil ctx. (They ran the tree, and at the stop every actor was killed at
// once, no child stopped in order, and the error was a bare
// context.DeadlineExceeded.)
func TestRunNegativeStopTimeoutRefused(t *testing.T) {
	started := make(chan struct{}, 2)
	spec := supervisor.Spec{Children: []supervisor.ChildSpec{{ID: "w", Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
		started <- struct{}{}
		return c.SpawnLink(actor.ActorFunc(func(*actor.Context, any) {}))
	}}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a run that would stop at once
	if err := supervisor.Run(ctx, actor.Config{Schedulers: 1}, spec, -time.Second); !errors.Is(err, actor.ErrNegativeTimeout) {
		t.Errorf("Run with a negative stopTimeout: %v, want actor.ErrNegativeTimeout", err)
	}
	sys := testsys.Start(t, actor.Config{Schedulers: 1})
	if err := supervisor.RunSystem(ctx, sys, spec, -1); !errors.Is(err, actor.ErrNegativeTimeout) {
		t.Errorf("RunSystem with a negative stopTimeout: %v, want actor.ErrNegativeTimeout", err)
	}
	select {
	case <-started:
		t.Error("a child was started for a run refused")
	default:
	}
}

// TestBadSpecFlagsRejected: an AutoShutdown or a child Type out of range is
// a bad spec, as OTP's {invalid_auto_shutdown, _} and {invalid_child_type,
// _}; both were taken (an unknown AutoShutdown meant never, with significant
// children accepted and then ignored; an unknown Type counted as a worker).
// A bad Restart prints as a value instead of panicking in String.
func TestBadSpecFlagsRejected(t *testing.T) {
	sys := newSys(t)
	start := supervisor.ServerStart(func(...any) actor.Server { return idleServer{} })
	for name, spec := range map[string]supervisor.Spec{
		"auto_shutdown": {AutoShutdown: supervisor.AutoShutdown(7),
			Children: []supervisor.ChildSpec{{ID: "a", Start: start, Restart: supervisor.Temporary, Significant: true}}},
		"type": {Children: []supervisor.ChildSpec{{ID: "a", Start: start, Type: supervisor.ChildType(5)}}},
	} {
		_, err := supervisor.Start(sys, spec)
		var se *actor.StartError
		if !errors.As(err, &se) {
			t.Errorf("%s: Start = %v, want a StartError", name, err)
			continue
		}
		if _, ok := se.Reason.(supervisor.StartSpecError); !ok {
			t.Errorf("%s: reason %v, want a StartSpecError", name, se.Reason)
		}
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = supervisor.StartChild(sys, sup, supervisor.ChildSpec{ID: "b", Start: start, Type: supervisor.ChildType(-1)})
	if _, ok := err.(supervisor.StartSpecError); !ok {
		t.Errorf("StartChild of a bad Type = %v, want a StartSpecError", err)
	}
	if s := fmt.Sprint(supervisor.Restart(9)); s != "Restart(9)" {
		t.Errorf("Restart(9) prints %q", s)
	}
}

// TestSignificantChildWithAutoShutdownNeverRejected: OTP rejects significant children when
// auto_shutdown is never.
func TestSignificantChildWithAutoShutdownNeverRejected(t *testing.T) {
	sys := newSys(t)
	_, err := supervisor.Start(sys, supervisor.Spec{
		Children: []supervisor.ChildSpec{{ID: "w", Restart: supervisor.Transient, Significant: true,
			Start: supervisor.ServerStart(func(...any) actor.Server { return idleServer{} })}},
	})
	if err == nil {
		t.Errorf("significant child with AutoShutdown Never accepted")
	}
}
