package colonytest

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/detmode"
)

// Option configures Run, Check and VerifyDeterminism.
type Option func(*options)

type options struct {
	cfg      actor.Config
	crashes  int
	rate     int
	crashIf  func(Candidate) bool
	traceMax int
	holdRate int
	timeouts int
	toRate   int
}

// Config sets the Config the System starts with. Schedulers, Budget and
// WatchdogThreshold are the mode's own (one role, one message a step, no
// watchdog) whatever it says; the rest (MaxActors, Logger, Reporter) is
// taken as given. Default: a Logger that discards reports (crashes are in
// the trace).
func Config(cfg actor.Config) Option { return func(o *options) { o.cfg = cfg } }

// Crashes injects up to n faults per run: before a step, the source may
// kill the actor about to run (an untrappable kill, as from outside), about
// once in every rate steps. Only actors match accepts are candidates; a
// nil match takes every actor but the package's own probes. Under Check
// the kills are rapid's draws, and shrink away when a failure does not
// need them.
func Crashes(n, rate int, match func(Candidate) bool) Option {
	return func(o *options) { o.crashes, o.rate, o.crashIf = n, max(rate, 1), match }
}

// Holds sets how often the source keeps a pair's messages in flight for
// one more step (about once in rate offers), so that messages from other
// senders overtake them; per-sender order is kept. Default 8; 0 turns
// holds off: every message lands at the first step boundary after its
// send, which is when the production scheduler would have it queued.
func Holds(rate int) Option { return func(o *options) { o.holdRate = max(rate, 0) } }

// CallTimeouts makes up to n calls a run time out (about one call in
// rate): a call an actor makes with a timeout (the test body's own calls
// are never chosen) then fails with actor.ErrTimeout at the next step boundary, whatever the
// callee does (its reply, if it comes, is late and dropped). Calls with
// Infinity are never chosen. Under Check these are rapid draws and shrink
// away when a failure does not need them.
func CallTimeouts(n, rate int) Option {
	return func(o *options) { o.timeouts, o.toRate = n, max(rate, 1) }
}

// TraceLines bounds how many trace lines a failure prints (the last ones).
// Default 60; 0 prints none, negative prints all.
func TraceLines(n int) Option { return func(o *options) { o.traceMax = n } }

// Candidate is an actor Crashes may kill, for its match func: called on
// the scheduler's goroutine between two steps, it may look the System up
// (Whereis, Alive) but must not wait on it.
type Candidate struct {
	Sys *actor.System
	Pid actor.Pid
	// Type is the behaviour's type, as %T prints the user's value: a
	// Server is named by the Server given to StartServer or SpawnServer
	// ("*main.store"), a Typed server by its TypedServer, a supervisor as
	// "*supervisor.sup"; the trace names actors alike.
	Type string
}

func buildOptions(opts []Option) options {
	o := options{traceMax: 60, holdRate: 8}
	for _, f := range opts {
		f(&o)
	}
	if o.cfg.Logger == nil && o.cfg.Reporter == nil {
		o.cfg.Logger = func(string, ...any) {}
	}
	return o
}

// tb is what the package needs of a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Log(args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Failed() bool
}

// source is where a run's choices come from: a seeded PRNG or rapid.
type source interface {
	choose(n int) int
	crash(rate int) bool
	hold(rate int) bool
}

type seedSource struct{ r *rand.Rand }

func newSeedSource(seed uint64) *seedSource {
	return &seedSource{rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))}
}

func (s *seedSource) choose(n int) int    { return s.r.IntN(n) }
func (s *seedSource) crash(rate int) bool { return s.r.IntN(rate) == 0 }
func (s *seedSource) hold(rate int) bool  { return s.r.IntN(rate) == 0 }

// rapidSource draws from a *rapid.T. Draws happen on the scheduler's
// goroutine, not the property's: a panic there (rapid ends a test case
// whose data ran out by panicking) is caught, kept for the property's
// goroutine to raise again, and every later choice is canonical.
type rapidSource struct {
	t        *rapid.T
	mu       sync.Mutex
	panicked any
}

func (s *rapidSource) draw(g *rapid.Generator[int], label string) (v int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.panicked != nil {
		return 0
	}
	defer func() {
		if r := recover(); r != nil {
			s.panicked, v = r, 0
		}
	}()
	return g.Draw(s.t, label)
}

func (s *rapidSource) choose(n int) int { return s.draw(rapid.IntRange(0, n-1), "schedule") }

// crash draws 0..rate; only the top value crashes, so a shrunk draw (0)
// is no crash.
func (s *rapidSource) crash(rate int) bool {
	return s.draw(rapid.IntRange(0, rate), "crash") == rate
}

// hold is crash's kind of draw: 0, the shrunk value, delivers.
func (s *rapidSource) hold(rate int) bool {
	return s.draw(rapid.IntRange(0, rate-1), "hold") == rate-1
}

func (s *rapidSource) rethrow() {
	s.mu.Lock()
	p := s.panicked
	s.mu.Unlock()
	if p != nil {
		panic(p)
	}
}

// run is one deterministic run of body, inside the caller's bubble.
type run struct {
	o      options
	src    source
	sys    *actor.System
	mu     sync.Mutex
	trace  []detmode.Event
	picks  []pick
	kills  int
	closed bool
}

// pick is one real choice of a run's schedule: at step N, candidate Pick
// of Of.
type pick struct{ N, Pick, Of int }

func (r *run) hooks() *detmode.Hooks {
	h := &detmode.Hooks{
		Settle: synctest.Wait,
		Choose: func(n int) int {
			i := r.src.choose(n)
			r.mu.Lock()
			r.picks = append(r.picks, pick{N: len(r.picks), Pick: i, Of: n})
			r.mu.Unlock()
			return i
		},
		Trace: func(e detmode.Event) {
			r.mu.Lock()
			if !r.closed {
				r.trace = append(r.trace, e)
			}
			r.mu.Unlock()
		},
	}
	if r.o.timeouts > 0 {
		n := 0
		h.CallTimeout = func() bool {
			if n >= r.o.timeouts || !r.src.crash(r.o.toRate) {
				return false
			}
			n++
			return true
		}
	}
	if r.o.holdRate > 0 {
		h.Hold = func() bool { return r.src.hold(r.o.holdRate) }
	}
	if r.o.crashes > 0 {
		h.Fault = func(s detmode.Step) bool {
			if r.kills >= r.o.crashes || strings.HasSuffix(s.Actor, "colonytest.probe") {
				return false
			}
			if r.o.crashIf != nil && !r.o.crashIf(Candidate{Sys: r.sys, Pid: s.Raw.(actor.Pid), Type: s.Actor}) {
				return false
			}
			if !r.src.crash(r.o.rate) {
				return false
			}
			r.kills++
			return true
		}
	}
	return h
}

// start starts the run's System; it must be called inside the bubble.
func (r *run) start(tb tb) *actor.System {
	tb.Helper()
	cfg := detmode.WithHooks(r.o.cfg, r.hooks()).(actor.Config)
	sys, err := actor.Start(cfg)
	if err != nil {
		tb.Fatalf("colonytest: Start: %v", err)
	}
	r.sys = sys
	return sys
}

// stop shuts the System down: its trace ends there.
func (r *run) stop(tb tb) {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // virtual
	defer cancel()
	if err := r.sys.Shutdown(ctx); err != nil {
		tb.Errorf("colonytest: Shutdown: %v", err)
	}
}

// Trace returns the run's trace, one line an event.
func (r *run) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.trace))
	for i, e := range r.trace {
		out[i] = formatEvent(e)
	}
	return out
}

func formatEvent(e detmode.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %v %s %s", e.N, e.At.Round(time.Microsecond), e.Kind, e.Pid)
	if e.Actor != "" {
		b.WriteString(" " + e.Actor)
	}
	if e.Input != "" {
		b.WriteString(": " + e.Input)
	}
	if e.Of > 1 {
		fmt.Fprintf(&b, " [pick %d of %d]", e.Pick, e.Of)
	}
	return b.String()
}

// schedule is the run's choices that were not canonical: "step:pick/of".
func (r *run) schedule() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, e := range r.trace {
		if e.Kind == "run" || e.Kind == "reap" {
			if e.Pick != 0 {
				parts = append(parts, fmt.Sprintf("%d:%d/%d", e.N, e.Pick, e.Of))
			}
		}
		if e.Kind == "kill" {
			parts = append(parts, fmt.Sprintf("%d:kill", e.N))
		}
		if e.Kind == "timeout" {
			parts = append(parts, fmt.Sprintf("%d:timeout(%s)", e.N, e.Pid))
		}
		if e.Kind == "hold" {
			parts = append(parts, fmt.Sprintf("%d:hold(%s)", e.N, e.Pid))
		}
	}
	if len(parts) == 0 {
		return "canonical (no reordering)"
	}
	return strings.Join(parts, " ")
}

// report logs what a failing run did.
func (r *run) report(tb tb, header string) {
	tb.Helper()
	lines := r.lines()
	var b strings.Builder
	b.WriteString(header)
	fmt.Fprintf(&b, "\ncolonytest: %d steps, schedule (step:pick/of, only the non-canonical choices): %s", r.steps(), r.schedule())
	if n := r.o.traceMax; n != 0 {
		from := 0
		if n > 0 && len(lines) > n {
			from = len(lines) - n
			fmt.Fprintf(&b, "\ncolonytest: trace (last %d of %d events):", n, len(lines))
		} else {
			b.WriteString("\ncolonytest: trace:")
		}
		for _, l := range lines[from:] {
			b.WriteString("\n  " + l)
		}
	}
	tb.Log(b.String())
}

func (r *run) steps() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.trace) == 0 {
		return 0
	}
	return r.trace[len(r.trace)-1].N
}

// Result is what a run did: its trace, for a test's own checks.
type Result struct {
	// Trace is one line an event: "#step time kind pid actor: input
	// [pick i of n]".
	Trace []string
	// Schedule is the run's non-canonical choices, as a failure prints it.
	Schedule string
	// Steps is the number of steps the run took.
	Steps int
}

// Run runs body once against a fresh System in deterministic mode, its
// choices drawn from a PRNG seeded with seed: the same seed gives the same
// schedule, the same virtual times and the same trace. The System is shut
// down when body returns (its trace ends there). If the test fails, the
// seed, the schedule and the trace are logged. Body runs inside a
// testing/synctest bubble: its time.Sleep, time.After and timeouts are on
// the virtual clock, it must not call t.Run or t.Parallel, and goroutines
// it starts must end before it returns.
func Run(t *testing.T, seed uint64, body func(t *testing.T, sys *actor.System), opts ...Option) Result {
	t.Helper()
	o := buildOptions(opts)
	r := &run{o: o, src: newSeedSource(seed)}
	defer func() {
		// synctest's deadlock: the body waits for something that never
		// comes, with no timeout, while every actor waits too. Its
		// goroutines stay blocked; the test fails with what they did.
		if p := recover(); p != nil {
			if s := fmt.Sprint(p); strings.HasPrefix(s, "deadlock") {
				r.report(t, fmt.Sprintf("colonytest: seed %d: %s: the body and every actor wait, and no timer is armed", seed, s))
				t.Fatalf("colonytest: %s", s)
			}
			panic(p)
		}
	}()
	synctest.Test(t, func(t *testing.T) {
		t.Helper()
		sys := r.start(t)
		defer func() {
			r.stop(t)
			if t.Failed() {
				r.report(t, fmt.Sprintf("colonytest: failed with seed %d (colonytest.Run(t, %d, ...) replays it)", seed, seed))
			}
		}()
		body(t, sys)
	})
	return Result{Trace: r.lines(), Schedule: r.schedule(), Steps: r.steps()}
}

// Check runs body as a rapid property: rapid draws the schedule (and the
// faults Crashes asks for) along with body's own inputs, so a failure
// shrinks to the fewest, smallest deviations from first-come-first-served
// that still fail, and rapid prints how to replay it (its seed and
// failfile). The failing run's schedule and trace are logged.
func Check(t *testing.T, body func(t *rapid.T, sys *actor.System), opts ...Option) {
	t.Helper()
	rapid.Check(t, property(t, buildOptions(opts), body, nil))
}

// property is the rapid property of one deterministic run of body, in a
// bubble of its own under t. failed, if not nil, is told of each failing
// run (the last one it is told of is rapid's shrunk, final replay).
func property(t *testing.T, o options, body func(t *rapid.T, sys *actor.System), failed func(r *run)) func(*rapid.T) {
	return func(rt *rapid.T) {
		var caught any
		// The body runs on the bubble's goroutine, not rapid's: its
		// failures (rapid's panics) are caught there and raised again
		// here, where rapid looks for them.
		synctest.Test(t, func(*testing.T) {
			src := &rapidSource{t: rt}
			r := &run{o: o, src: src}
			sys := r.start(rt)
			func() {
				defer func() {
					if p := recover(); p != nil {
						caught = p
					}
				}()
				body(rt, sys)
				src.rethrow()
			}()
			r.stop(rt)
			if (caught != nil || rt.Failed()) && !invalidData(caught) {
				r.report(rt, "colonytest: this run fails")
				if failed != nil {
					failed(r)
				}
			}
		})
		// rapid tells one failure from another by where the panic was
		// raised, and all of ours are raised again here: a test case rapid
		// made invalid (its data ran out while shrinking) must not look
		// like the failure being shrunk.
		if invalidData(caught) {
			panic(caught)
		}
		if caught != nil {
			panic(caught)
		}
	}
}

// invalidData reports whether p is rapid's panic for a test case whose data
// ran out (rapid's invalidData, unexported).
func invalidData(p any) bool {
	return p != nil && fmt.Sprintf("%T", p) == "rapid.invalidData"
}

// Found is what Find found: a failing run, shrunk.
type Found struct {
	// Passed is how many runs passed before the first one that failed:
	// the N of rapid's "failed after N tests" (0 when the first run
	// failed). Runs is how many runs rapid made in all: those, the
	// failing one, and shrinking's.
	Passed, Runs int
	// Schedule and Steps are the shrunk run's (Result).
	Schedule string
	Steps    int
	// Message is what rapid and the shrunk run reported.
	Message string
}

// String sums f up in one line: "failed after 0 passing runs, 23 runs in
// all with shrinking; shrunk to 9 steps, schedule 1:1/2".
func (f *Found) String() string {
	return fmt.Sprintf("failed after %s, %s in all with shrinking; shrunk to %s, schedule %s",
		plural(f.Passed, "passing run"), plural(f.Runs, "run"), plural(f.Steps, "step"), f.Schedule)
}

// plural is "1 run", "0 runs", "2 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Find is Check for a test that asserts a bug is there: it runs the
// property as Check does, but a failure does not fail t; Find returns it,
// shrunk, or nil if checks runs passed (rapid's -rapid.checks: runs rapid
// made invalid, as by an exhausted draw, do not count). No failfile is
// written, and shrinking stops after 10 s (unless -rapid.shrinktime says
// otherwise). It sets rapid's flags for its run and puts them back: do not
// run it in parallel (t.Parallel) with other rapid tests.
func Find(t *testing.T, checks int, body func(t *rapid.T, sys *actor.System), opts ...Option) *Found {
	t.Helper()
	o := buildOptions(opts)
	if f := flag.Lookup("rapid.nofailfile"); f != nil {
		old := f.Value.String()
		f.Value.Set("true")
		defer f.Value.Set(old)
	}
	if f := flag.Lookup("rapid.checks"); f != nil {
		old := f.Value.String()
		f.Value.Set(strconv.Itoa(checks))
		defer f.Value.Set(old)
	}
	if f := flag.Lookup("rapid.shrinktime"); f != nil && f.Value.String() == "30s" {
		// rapid's default; a Find asserts that a bug is there and small,
		// and its shrinking is bounded tighter (-rapid.shrinktime wins).
		f.Value.Set("10s")
		defer f.Value.Set("30s")
	}
	var found *Found
	runs, passed := 0, 0
	rec := &recordTB{name: t.Name()}
	rapid.Check(rec, func(rt *rapid.T) {
		runs++
		failed := false
		property(t, o, body, func(r *run) {
			failed = true
			if found == nil {
				found = &Found{Passed: passed}
			}
			found.Schedule, found.Steps = r.schedule(), r.steps()
		})(rt) // a failure, or a run rapid made invalid, panics here
		if !failed && found == nil {
			passed++
		}
	})
	if found != nil {
		found.Message = rec.String()
		found.Runs = runs
	}
	return found
}

// recordTB is a rapid.TB that records instead of failing a test.
type recordTB struct {
	name   string
	mu     sync.Mutex
	b      strings.Builder
	failed bool
}

func (r *recordTB) Helper()      {}
func (r *recordTB) Name() string { return r.name }
func (r *recordTB) Logf(format string, args ...any) {
	r.mu.Lock()
	fmt.Fprintf(&r.b, format+"\n", args...)
	r.mu.Unlock()
}
func (r *recordTB) Log(args ...any)                  { r.Logf("%s", fmt.Sprint(args...)) }
func (r *recordTB) Skipf(format string, args ...any) { r.Logf(format, args...) }
func (r *recordTB) Skip(args ...any)                 { r.Log(args...) }
func (r *recordTB) SkipNow()                         {}
func (r *recordTB) Errorf(format string, args ...any) {
	r.Logf(format, args...)
	r.Fail()
}
func (r *recordTB) Error(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recordTB) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recordTB) Fatal(args ...any)                 { r.Error(args...) }
func (r *recordTB) FailNow()                          { r.Fail() }
func (r *recordTB) Fail()                             { r.mu.Lock(); r.failed = true; r.mu.Unlock() }
func (r *recordTB) Failed() bool                      { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }
func (r *recordTB) String() string                    { r.mu.Lock(); defer r.mu.Unlock(); return r.b.String() }

// VerifyDeterminism runs body twice with seed and fails the test if the
// two traces differ, naming the first event that does: something the
// mode does not control (a goroutine of the test's own, a channel a
// handler shares with the body, map order) decided it. It returns the
// trace of the first run.
func VerifyDeterminism(t *testing.T, seed uint64, body func(t *testing.T, sys *actor.System), opts ...Option) Result {
	t.Helper()
	a := Run(t, seed, body, opts...)
	b := Run(t, seed, body, opts...)
	if d := firstDiff(a.Trace, b.Trace); d >= 0 {
		var x, y string
		if d < len(a.Trace) {
			x = a.Trace[d]
		}
		if d < len(b.Trace) {
			y = b.Trace[d]
		}
		t.Errorf("colonytest: two runs of seed %d differ at event %d:\n  first:  %s\n  second: %s\n"+
			"something outside the mode's control decided it (a goroutine of the test's own, a channel shared "+
			"between a handler and the test, a wall-clock read taken before the bubble, map order): see docs/testing.md",
			seed, d, x, y)
	}
	return a
}

// firstDiff is the index of the first line where a and b differ, or -1.
func firstDiff(a, b []string) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}
