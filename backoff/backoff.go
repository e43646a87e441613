package backoff

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// ErrBadConfig is New's error for a bad argument or option; the error New
// returns wraps it and says which.
var ErrBadConfig = errors.New("backoff: bad config")

// Backoff is an exponential backoff with jitter; see the package doc. It is
// owned by one actor or goroutine (not safe for concurrent use).
type Backoff struct {
	min, max   time.Duration
	factor     float64
	jitter     float64
	resetAfter time.Duration
	rand       func() float64   // in [0, 1)
	now        func() time.Time // for ResetAfter

	n       int       // the exponent of the next base: failures since the last reset, capped where the base reaches max
	fails   int       // failures since the last reset
	up      bool      // a Success is pending: the next Next may reset
	upSince time.Time // when that Success was
}

// Option configures a Backoff.
type Option func(*Backoff)

// Factor sets the growth per failure (default 2); it must be at least 1
// (1: a constant delay, Min, give or take the jitter).
func Factor(f float64) Option { return func(b *Backoff) { b.factor = f } }

// Jitter sets the fraction of each delay that is random (default 0): a
// delay is drawn from [base*(1-j), base]. It must be in [0, 1].
func Jitter(j float64) Option { return func(b *Backoff) { b.jitter = j } }

// ResetAfter makes a Success reset the count only if the next failure
// comes at least d after it (default 0: Success resets at once). It must
// not be negative.
func ResetAfter(d time.Duration) Option { return func(b *Backoff) { b.resetAfter = d } }

// Rand sets the source of the jitter, a func returning values in [0, 1)
// (default: math/rand/v2's Float64). For tests.
func Rand(f func() float64) Option { return func(b *Backoff) { b.rand = f } }

// Clock sets the clock ResetAfter is measured with (default time.Now). For
// tests.
func Clock(now func() time.Time) Option { return func(b *Backoff) { b.now = now } }

// New returns a Backoff whose first delay is min and whose delays never
// exceed max. Errors: ErrBadConfig (wrapped) for min <= 0, max < min, or a
// bad option.
func New(min, max time.Duration, opts ...Option) (*Backoff, error) {
	b := &Backoff{min: min, max: max, factor: 2, rand: rand.Float64, now: time.Now}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ErrBadConfig)
		}
		o(b)
	}
	switch {
	case min <= 0:
		return nil, fmt.Errorf("%w: min %v, want > 0", ErrBadConfig, min)
	case max < min:
		return nil, fmt.Errorf("%w: max %v below min %v", ErrBadConfig, max, min)
	case !(b.factor >= 1) || math.IsInf(b.factor, 1): // NaN fails >=
		return nil, fmt.Errorf("%w: factor %v, want a finite value >= 1", ErrBadConfig, b.factor)
	case !(b.jitter >= 0 && b.jitter <= 1):
		return nil, fmt.Errorf("%w: jitter %v, want 0 <= jitter <= 1", ErrBadConfig, b.jitter)
	case b.resetAfter < 0:
		return nil, fmt.Errorf("%w: reset after %v, want >= 0", ErrBadConfig, b.resetAfter)
	case b.rand == nil || b.now == nil:
		return nil, fmt.Errorf("%w: nil Rand or Clock", ErrBadConfig)
	}
	return b, nil
}

// Next counts a failure and returns the delay to wait before the next try.
func (b *Backoff) Next() time.Duration {
	if b.up {
		b.up = false
		if b.now().Sub(b.upSince) >= b.resetAfter {
			b.n, b.fails = 0, 0
		}
	}
	b.fails++
	base := b.base(b.n)
	if base < b.max { // once at max, the count stops growing: it cannot overflow
		b.n++
	}
	if b.jitter == 0 {
		return base
	}
	r := b.rand()
	if !(r >= 0 && r < 1) { // a bad test source must not break the bounds
		r = 0
	}
	return base - time.Duration(float64(base)*b.jitter*r)
}

// base is min(Min * Factor^n, Max).
func (b *Backoff) base(n int) time.Duration {
	f := float64(b.min) * math.Pow(b.factor, float64(n))
	if f >= float64(b.max) { // +Inf included
		return b.max
	}
	return time.Duration(f)
}

// Success says the thing retried works now: see the package doc, "Reset".
func (b *Backoff) Success() {
	if b.resetAfter == 0 {
		b.Reset()
		return
	}
	if !b.up { // stable since the first Success after a failure
		b.up, b.upSince = true, b.now()
	}
}

// Reset forgets every failure: the next delay is Min's (give or take the
// jitter).
func (b *Backoff) Reset() { b.n, b.fails, b.up = 0, 0, false }

// Failures returns the failures (Next calls) counted since the last reset.
func (b *Backoff) Failures() int { return b.fails }
