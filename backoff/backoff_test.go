package backoff_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/colonyrt/colony/backoff"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// model is the reference: the package doc's formulas, computed directly.
type model struct {
	min, max     time.Duration
	factor       float64
	jitter       float64
	resetAfter   time.Duration
	n            int // failures since the last reset
	up           bool
	upSince, now time.Time
}

func (m *model) base(n int) float64 {
	return math.Min(float64(m.min)*math.Pow(m.factor, float64(n)), float64(m.max))
}

// TestBackoffModel drives a Backoff with random configs and random
// sequences of Next, Success, Reset and clock steps, against the model:
// every delay lies in [base(n)*(1-jitter), base(n)] (so within
// [(1-jitter)*min, max]), the bases never decrease between resets, and a
// Success resets the count exactly when the model says.
func TestBackoffModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &model{
			min:        time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "min")),
			factor:     rapid.Float64Range(1, 10).Draw(t, "factor"),
			jitter:     rapid.Float64Range(0, 1).Draw(t, "jitter"),
			resetAfter: time.Duration(rapid.Int64Range(0, int64(time.Minute)).Draw(t, "resetAfter")),
			now:        time.Unix(1000, 0),
		}
		m.max = m.min + time.Duration(rapid.Int64Range(0, math.MaxInt64-int64(m.min)).Draw(t, "extra"))
		var r float64
		b, err := backoff.New(m.min, m.max, backoff.Factor(m.factor), backoff.Jitter(m.jitter),
			backoff.ResetAfter(m.resetAfter), backoff.Rand(func() float64 { return r }),
			backoff.Clock(func() time.Time { return m.now }))
		if err != nil {
			t.Fatal(err)
		}
		last := time.Duration(-1)
		t.Repeat(map[string]func(*rapid.T){
			"next": func(t *rapid.T) {
				r = rapid.Float64Range(0, math.Nextafter(1, 0)).Draw(t, "r")
				if m.up {
					m.up = false
					if m.now.Sub(m.upSince) >= m.resetAfter {
						m.n, last = 0, -1
					}
				}
				base := m.base(m.n)
				m.n++
				d := b.Next()
				lo := time.Duration(base * (1 - m.jitter))
				// float rounding: allow a nanosecond either side
				if d < lo-1 || d > time.Duration(base)+1 {
					t.Fatalf("delay %v outside [%v, %v] (n=%d)", d, lo, time.Duration(base), m.n-1)
				}
				if d > m.max || float64(d) < (1-m.jitter)*float64(m.min)-1 {
					t.Fatalf("delay %v outside the bounds [%v*(1-%v), %v]", d, m.min, m.jitter, m.max)
				}
				if time.Duration(base) < last {
					t.Fatalf("base went down: %v after %v", time.Duration(base), last)
				}
				last = time.Duration(base)
				if b.Failures() != m.n {
					t.Fatalf("Failures %d, want %d", b.Failures(), m.n)
				}
			},
			"success": func(t *rapid.T) {
				b.Success()
				if m.resetAfter == 0 {
					m.n, m.up, last = 0, false, -1
				} else if !m.up {
					m.up, m.upSince = true, m.now
				}
			},
			"reset": func(t *rapid.T) {
				b.Reset()
				m.n, m.up, last = 0, false, -1
			},
			"tick": func(t *rapid.T) {
				m.now = m.now.Add(time.Duration(rapid.Int64Range(0, int64(2*m.resetAfter+1)).Draw(t, "dt")))
			},
		})
	})
}

// TestBackoffNoOverflow: a count of failures far past the one that reaches
// Max keeps every delay at Max (no overflow into a negative or tiny delay).
func TestBackoffNoOverflow(t *testing.T) {
	b, err := backoff.New(time.Second, time.Duration(math.MaxInt64), backoff.Factor(10))
	if err != nil {
		t.Fatal(err)
	}
	prev := time.Duration(0)
	for i := 0; i < 10000; i++ {
		d := b.Next()
		if d < prev {
			t.Fatalf("failure %d: %v after %v", i, d, prev)
		}
		prev = d
	}
	if prev != time.Duration(math.MaxInt64) {
		t.Fatalf("last delay %v, want the max", prev)
	}
	if b.Failures() != 10000 {
		t.Fatalf("Failures %d", b.Failures())
	}
}

// TestBackoffResetAfter: a Success resets the count only once the thing
// has stayed up for the stable period, measured from the first Success.
func TestBackoffResetAfter(t *testing.T) {
	now := time.Unix(0, 0)
	b, err := backoff.New(10*time.Millisecond, time.Second, backoff.ResetAfter(time.Minute),
		backoff.Clock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []time.Duration{10, 20, 40} {
		if d := b.Next(); d != want*time.Millisecond {
			t.Fatalf("delay %v, want %v", d, want*time.Millisecond)
		}
	}
	b.Success()
	now = now.Add(30 * time.Second)
	b.Success() // a later Success does not move the start of the stable period
	now = now.Add(29 * time.Second)
	if d := b.Next(); d != 80*time.Millisecond { // up 59 s: not stable
		t.Fatalf("after 59 s up: %v, want 80ms", d)
	}
	b.Success()
	now = now.Add(time.Minute)
	if d := b.Next(); d != 10*time.Millisecond { // up a minute: reset
		t.Fatalf("after a minute up: %v, want 10ms", d)
	}
}

// TestBackoffBadConfig: each bad argument is ErrBadConfig, saying which.
func TestBackoffBadConfig(t *testing.T) {
	for _, c := range []struct {
		name     string
		min, max time.Duration
		opts     []backoff.Option
	}{
		{"zero min", 0, time.Second, nil},
		{"negative min", -1, time.Second, nil},
		{"max below min", time.Second, time.Millisecond, nil},
		{"factor below 1", 1, 2, []backoff.Option{backoff.Factor(0.5)}},
		{"NaN factor", 1, 2, []backoff.Option{backoff.Factor(math.NaN())}},
		{"infinite factor", 1, 2, []backoff.Option{backoff.Factor(math.Inf(1))}},
		{"negative jitter", 1, 2, []backoff.Option{backoff.Jitter(-0.1)}},
		{"jitter above 1", 1, 2, []backoff.Option{backoff.Jitter(1.5)}},
		{"NaN jitter", 1, 2, []backoff.Option{backoff.Jitter(math.NaN())}},
		{"negative reset", 1, 2, []backoff.Option{backoff.ResetAfter(-1)}},
		{"nil option", 1, 2, []backoff.Option{nil}},
		{"nil rand", 1, 2, []backoff.Option{backoff.Rand(nil)}},
		{"nil clock", 1, 2, []backoff.Option{backoff.Clock(nil)}},
	} {
		b, err := backoff.New(c.min, c.max, c.opts...)
		if !errors.Is(err, backoff.ErrBadConfig) || b != nil {
			t.Errorf("%s: %v, %v; want ErrBadConfig", c.name, b, err)
		}
	}
}

// TestBackoffBadRand: a Rand outside [0, 1) does not break the bounds.
func TestBackoffBadRand(t *testing.T) {
	for _, r := range []float64{-1, 1, 7, math.NaN(), math.Inf(1)} {
		b, err := backoff.New(time.Second, time.Minute, backoff.Jitter(1), backoff.Rand(func() float64 { return r }))
		if err != nil {
			t.Fatal(err)
		}
		if d := b.Next(); d < 0 || d > time.Second {
			t.Errorf("rand %v: delay %v", r, d)
		}
	}
}
