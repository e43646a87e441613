// Package pool is a worker pool in the style of Erlang's poolboy, and a
// router that spreads calls and casts over a set of workers.
//
// # Pool: checkout and checkin
//
// A Pool starts Size workers (a StartFunc starts each) and lends them out:
// Checkout gives a caller a worker for its sole use until it checks it in.
//
//	p, err := pool.Start(sys, startConn, pool.Size(4), pool.MaxOverflow(2))
//	w, err := p.Checkout(c, time.Second) // c: a Context, or the System
//	... actor.Call[reply](c, w, req, timeout) ...
//	p.Checkin(c, w)
//
// The rules are poolboy's:
//   - Checkout takes an idle worker if there is one (the one checked in
//     last: LIFO, unless FIFO), else starts an overflow worker while fewer
//     than MaxOverflow run, else waits, up to its timeout, in a FIFO of
//     waiting checkouts (TryCheckout, or a timeout of 0, does not wait:
//     ErrFull). With MaxWaiting(n), a checkout that finds n waiting fails
//     at once with ErrQueueFull.
//   - Checkin gives the worker to the oldest waiting checkout, else stops
//     it if overflow workers run (the pool shrinks back to Size), else
//     makes it idle. A checkin of a worker that is not checked out (twice,
//     a stale or unknown pid) does nothing.
//   - The pool monitors each holder (an actor that checked a worker out):
//     a holder that dies returns its workers, as checkins. A checkout from
//     plain Go code (the System as Caller) has no pid to monitor: check in
//     with a defer, or use Transaction.
//   - The pool links to its workers and traps exits: a worker that dies,
//     idle or checked out, is replaced: its replacement goes to the oldest
//     waiting checkout, or is not started while overflow workers run (the
//     pool shrinks by one), or becomes idle. The holder of a worker that
//     died is told nothing by the pool: its calls to the worker fail with
//     actor.ErrNoProc, and its checkin of it does nothing. A replacement
//     that fails to start is retried after a backoff (10 ms doubling to
//     1 s, with jitter), reported through System.Log.
//   - A waiting checkout whose caller gave up (timed out, or died) is
//     skipped: a worker handed out is never lost to a caller that no
//     longer waits (actor.Context.Reply says whether the reply was taken;
//     a reply not taken returns the worker at once).
//
// The workers run under a simple_one_for_one supervisor of the pool's own
// (temporary children, Shutdown WorkerShutdown: BrutalKill by default, as
// poolboy's), which reports their crashes and calls its Hooks; the pool
// manager, a gen_server, starts and stops them through it.
//
// # Router: calls and casts over workers
//
// A Router starts Size workers and forwards each call and cast sent to it
// (Call, Cast) to one of them: RoundRobin (the default) or LeastLoaded,
// the worker with the fewest calls routed to it whose callers still wait.
// A call is handed on as it is (the worker's HandleCall gets the
// actor.Request and answers the caller itself); the router links to its
// workers, and when one dies it answers each call it had handed that
// worker and whose caller still waits with ErrWorkerDied, and starts a
// replacement. Casts to a worker that dies are lost with its mailbox, as
// in OTP. Messages sent to the router with Send are not routed.
//
// # Handles, trees and errors
//
// Start starts a Pool (StartRouter a Router) from outside any tree; New
// and ChildSpec (NewRouter and Router.ChildSpec) embed one in a
// supervision tree, where it is restarted as its parent decides. A handle
// follows its pool across restarts (it calls whichever manager runs now);
// a handle whose pool does not run answers actor.ErrNoProc. Options are
// checked by New and Start: ErrBadOption, wrapped with what was wrong. A
// pool runs in one tree at a time (ErrRunning); Stop of one embedded in a
// tree is ErrEmbedded. On a System that has shut down, Start fails with
// actor.ErrStopped.
//
// # Concurrency
//
// A handle's methods are safe for concurrent use from any actor or
// goroutine. A Checkout that returns a worker happens after the Checkin
// (or start) that made it free; a holder's Checkin followed by its
// Checkout are handled in that order (one sender's messages keep their
// order).
package pool
