// Package detmode is the contract between package actor's deterministic
// scheduler (actor/det.go) and its one driver, package colonytest. It is
// internal so that nothing else can switch a System into that mode: a
// System started without Hooks never looks at any of this.
package detmode

import "time"

// Hooks is what a deterministic System asks of its driver. Every func is
// called on the goroutine that holds the System's one scheduler role, one
// call at a time, never concurrently with the test's own goroutines (they
// are all durably blocked whenever a hook runs: Settle's contract).
type Hooks struct {
	// Settle returns once every other goroutine of the test is durably
	// blocked (testing/synctest.Wait): the test body waiting on the System
	// (a call, a probe, a sleep on the virtual clock), handlers parked in
	// a wait, spare workers. The scheduler calls it before every step, so
	// that nothing but the step runs while the step runs.
	Settle func()
	// Choose returns an index in [0, n), n >= 2: which of n candidates
	// goes next. 0 is the canonical choice (the oldest candidate).
	Choose func(n int) int
	// Fault is asked once per step about the actor chosen to run: true
	// kills it (an untrappable kill, from outside) before its step, which
	// then only reaps it. Nil: no faults.
	Fault func(s Step) bool
	// Hold is asked, at each step boundary, about each pair (sender,
	// receiver) with messages in flight (sent and not yet in the
	// receiver's mailbox): true keeps them in flight one more step, so
	// that other senders' messages overtake them. false (the canonical
	// choice) delivers them, in order. Nil: every message lands at the
	// first boundary after its send.
	Hold func() bool
	// CallTimeout is asked about each call an actor makes with a timeout
	// (not the test's own calls): true makes it time out at the next step
	// boundary, whatever the callee does (a fault). Nil: none.
	CallTimeout func() bool
	// Trace receives every event, in order.
	Trace func(e Event)
}

// Step describes the step about to run, for Fault.
type Step struct {
	N     int    // step number, from 1
	Pid   string // the actor, as <0.index.generation> (no node: stable across runs)
	Actor string // its behaviour's type: the user's, through the runtime's wrappers ("*main.store" for a Server)
	Raw   any    // the actor's actor.Pid
}

// Event is one line of a deterministic run's trace.
type Event struct {
	N    int           // step number (0: before the first step)
	At   time.Duration // virtual time since Start
	Kind string        // "run", "exit", "kill", "reap", "fire"
	Pid  string        // <0.index.generation>
	// Actor is the behaviour's type (as Step.Actor); Input what the step takes: a
	// message's type and value, "init", "resume" (a blocked handler goes
	// on), "signal" (an exit signal or a monitor's Down on the system
	// lane).
	Actor, Input string
	// Of and Pick: how many actors were runnable and which was chosen
	// (Pick 0 of 1 is no choice at all).
	Of, Pick int
}

// WithHooks returns cfg (an actor.Config) switched to deterministic mode
// with h. Package actor sets it at init; colonytest calls it.
var WithHooks func(cfg any, h *Hooks) any
