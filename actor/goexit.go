// Design note: a handler that calls runtime.Goexit.
//
// Problem. runtime.Goexit ends the calling goroutine after running its
// deferred calls; recover returns nil during those calls and nothing can
// stop it (a panic raised and recovered on the way does not either). A
// handler may call it: t.FailNow in a test helper does, and so may a
// library. The goroutine is a worker's: it holds the actor (the slot word
// is Running) and a scheduler role, and run and loop, which would end the
// activation and keep the role going, never get control back. Before this
// was handled the actor stayed Alive for ever with nobody told, its role
// died with the goroutine (with one scheduler, no actor ran again) and
// Shutdown ran out its context.
//
// Rejected. Running handlers on a goroutine of their own so that a Goexit
// cannot reach the worker: a goroutine switch on every activation.
// Recovering: impossible, as above.
//
// Protocol: two deferred calls, one a level. (1) The actor: activate's
// deferred call sees neither a return nor a panic (recover is nil and the
// body did not finish), which is the Goexit, and ends the actor as a
// crash, with reason Panic{Value: ErrGoexit, Stack} (the stack still
// shows the frames that called Goexit), reported as a handler panic is,
// and releases it (goexited). A Server turns a Goexit in a callback into a
// crash of its own first, as it does a panic (server.go): Terminate runs
// with the Goexit reason and the crash is reported; a Goexit in Init fails
// the start with it. (2) The role: the worker goroutine's outermost
// deferred call (startWorker) sees that loop did not return and hands the
// role the worker holds to a spare or a fresh worker, as a handler that
// blocks does (waitPark: settleAct, then handoff), or, if the watchdog
// retired the role meanwhile, gives it up (its replacement already runs).
// The second catches a Goexit anywhere on a worker, whatever the first
// did: a panic recovered during the Goexit's deferred calls (a kill's
// exitUnwind when Terminate waits) still ends the goroutine.
//
// Context.Blocking's f runs on a goroutine of its own and is not a
// worker: its Goexit is raised in the handler as a panic (blocking.go).

package actor

import "errors"

// ErrGoexit is the Value of the Panic an actor exits with when its handler
// called runtime.Goexit (t.FailNow in a test helper does, and so may a
// library) instead of returning or panicking: a crash, reported as a
// panic is, that links, monitors and supervisors see as any other.
// errors.Is(reason, ErrGoexit) holds for it (Panic.Unwrap), and for a
// *StartError of a Server whose Init called Goexit.
var ErrGoexit = errors.New("actor: handler called runtime.Goexit")

// goexitReason is the exit reason of a handler's Goexit, with the stack
// of the frames that called it (goexited runs during the Goexit's
// deferred calls, above them).
func goexitReason() Panic { return Panic{Value: ErrGoexit, Stack: stack()} }

// goexited ends the actor whose handler called runtime.Goexit: from
// activate's deferred call, with the activation's goroutine about to die
// (the design note). A Server has already turned the Goexit into its stop
// (Terminate ran, the crash is reported): it exits with that reason. A
// killed actor's orphaned handler is released, as after a panic.
func (w *worker) goexited(p *proc) {
	if p.exit.Load() == alive {
		if a, ok := p.beh.(*serverActor); ok && a.stopped && p.stop {
			w.sys.terminate(w, p, stopReasonOf(p))
		} else {
			reason := goexitReason()
			w.sys.logCrash(p.pid, reason)
			w.sys.terminate(w, p, reason)
		}
	}
	w.release(p)
}

// handOnRole gives the role of a worker whose goroutine is ending in a
// Goexit to another worker (the design note, step 2): to a spare or a
// fresh one, as waitPark hands on the role of a handler that blocks; a
// role the watchdog retired is given up, its queue to the global queue.
func (w *worker) handOnRole() {
	s := w.role
	if s == nil {
		return // no role: a handler unwound by a halt (waitPark)
	}
	w.role = nil
	if s.settleAct() {
		w.sys.handoff(s)
	} else {
		s.drainToGlobal() // retired: a fresh role has the index
	}
}
