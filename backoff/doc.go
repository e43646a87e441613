// Package backoff computes restart and reconnect delays: exponential, with
// jitter, between a minimum and a maximum, reset after a stable period.
//
// A Backoff is a value an actor keeps in its state. It owns no goroutine
// and no timer: the actor asks it for the next delay and arms its own
// timer with it, so the retry is a message like any other, handled
// between the actor's other messages:
//
//	case dialFailed:
//		c.SendAfter(c.Self(), redial{}, w.backoff.Next())
//	case connected:
//		w.backoff.Success()
//
// # Delays
//
// The n-th delay since the last reset (n = 0, 1, 2, ...) has the base
//
//	base(n) = min(Min * Factor^n, Max)
//
// and is drawn uniformly from [base(n) * (1 - Jitter), base(n)]. So every
// delay d satisfies (1-Jitter)*Min <= d <= Max, the bases never decrease,
// and with Jitter 0 the delays are exactly Min, Min*Factor, ... up to Max.
// Jitter (a fraction in [0, 1], 0.5 is the "equal jitter" of many
// clients) spreads the retries of many actors that failed together (a pool
// of connections to one upstream), so that they do not all retry at once.
// Factor^n is computed in floating point and capped, so no count of
// failures overflows.
//
// # Reset
//
// Success says that what was retried works now. With ResetAfter 0 (the
// default) it resets the count at once: the next failure's delay is
// base(0) again. With ResetAfter(d), the count is reset only if the next
// failure comes at least d after the first Success since the last failure
// (later ones, such as one per request served, do not move it): a
// connection that comes up and drops again at once keeps backing off (as a
// supervisor's restart intensity counts a child that crashes right after
// its restart), while one that stayed up for d starts again from Min.
// Reset resets at once.
//
// # Errors and concurrency
//
// New checks its arguments and returns ErrBadConfig, wrapped with what was
// wrong, for a Min that is not positive, a Max below Min, a Factor below 1,
// a Jitter outside [0, 1] or a negative ResetAfter. A Backoff is not safe
// for concurrent use: it belongs to one actor (or one goroutine), as the
// rest of an actor's state does. The zero Backoff is not usable: make one
// with New. A Backoff may be copied; the copy counts on its own.
package backoff
