package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Liveness bounds only: generous, so a loaded machine is slow, not failing.
// No test sleeps for correctness; the sleeps below pace polls.
const (
	patience = 20 * time.Second
	poll     = 5 * time.Millisecond
)

type env struct {
	t    *testing.T
	sys  *actor.System
	up   *Upstream
	pool Pool
	sup  actor.Pid
}

// setup starts an upstream, a System and a pool on it; at the end it checks
// that Shutdown is clean and leaves no goroutine behind.
func setup(t *testing.T, opt Options) *env {
	t.Helper()
	before := goleak.IgnoreCurrent() // what ran before this test is not its leak
	up, err := StartUpstream("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := actor.Start(actor.Config{Logger: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	opt.Addr = up.Addr()
	pool, sup, err := Start(sys, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		up.Stop()
		goleak.VerifyNone(t, before)
	})
	return &env{t, sys, up, pool, sup}
}

func (e *env) do(line string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	return e.pool.Do(ctx, e.sys, line)
}

func (e *env) stats() Stats {
	e.t.Helper()
	s, err := e.pool.Stats(e.sys)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// eventually polls cond until it holds, failing the test after patience.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	for deadline := time.Now().Add(patience); !cond(); time.Sleep(poll) {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s (stats %+v)", what, e.stats())
		}
	}
}

// async runs a request on its own goroutine; the channel gets its outcome.
type outcome struct {
	reply string
	err   error
}

func (e *env) async(ctx context.Context, line string) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		r, err := e.pool.Do(ctx, e.sys, line)
		ch <- outcome{r, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(patience):
		t.Fatal("a request never returned")
		return outcome{}
	}
}

func TestDemo(t *testing.T) {
	var b strings.Builder
	if err := demo(&b); err != nil {
		t.Fatalf("demo: %v\n%s", err, b.String())
	}
	for _, want := range []string{"ECHO 1 -> OK 1", "DROP 2 -> error: " + ErrConnLost.Error(),
		"circuit open", "back on a new port", "Breaker:closed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, b.String())
		}
	}
}

// TestChaos: 8 goroutines x 40 requests through 4 connections to an upstream
// that holds, slows, drops and garbles. Every request gets exactly its own
// reply, or the error its kind calls for; each reaches the upstream once.
func TestChaos(t *testing.T) {
	e := setup(t, Options{Size: 4, Threshold: 1 << 30, RequestTimeout: patience})
	stop := make(chan struct{})
	var releaser sync.WaitGroup
	releaser.Go(func() { // HOLD requests go on after a while
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				e.up.Release()
			}
		}
	})
	verbs := []string{"DROP", "HOLD", "JUNK", "SLOW", "ECHO", "ECHO", "ECHO", "ECHO"}
	var mu sync.Mutex
	got := map[string]outcome{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				id := fmt.Sprintf("%d.%d", g, i)
				verb := verbs[(g+i)%len(verbs)]
				line := verb + " " + id
				if verb == "SLOW" {
					line += " 5"
				}
				r, err := e.do(line)
				mu.Lock()
				got[verb+" "+id] = outcome{r, err}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	releaser.Wait()

	for req, o := range got {
		verb, id, _ := strings.Cut(req, " ")
		switch {
		case verb == "DROP" && errors.Is(o.err, ErrConnLost):
		case verb != "DROP" && o.err == nil && o.reply == "OK "+id:
		default:
			t.Errorf("%s: reply %q, error %v", req, o.reply, o.err)
		}
		if n := e.up.Seen(id); n != 1 {
			t.Errorf("%s reached the upstream %d times", req, n)
		}
	}
	if len(got) != 8*40 {
		t.Errorf("%d outcomes, want %d", len(got), 8*40)
	}
	e.eventually("every connection idle and up again", func() bool {
		s := e.stats()
		return s.Connected == 4 && s.Busy == 0 && s.Queued == 0 && s.Breaker == Closed
	})
	if n := e.sys.Stats().LateReplies; n != 0 {
		t.Errorf("%d late replies: a request was answered after its call ended", n)
	}
}

// TestUpstreamTimeout: no reply within RequestTimeout fails the request and
// drops the connection, so the late reply cannot be taken for the next one's.
func TestUpstreamTimeout(t *testing.T) {
	// Long enough for the ECHOs after it on a loaded machine.
	e := setup(t, Options{Size: 1, RequestTimeout: time.Second})
	if _, err := e.do("HOLD t1"); !errors.Is(err, ErrUpstreamTimeout) {
		t.Fatalf("HOLD: %v, want ErrUpstreamTimeout", err)
	}
	e.up.Release() // its reply now goes to a connection that is gone
	if r, err := e.do("ECHO t2"); r != "OK t2" || err != nil {
		t.Fatalf("after a timeout: %q %v", r, err)
	}
	if r, err := e.do("JUNK t3"); r != "OK t3" || err != nil {
		t.Fatalf("JUNK: %q %v", r, err)
	}
	if r, err := e.do("ECHO t4"); r != "OK t4" || err != nil { // not UNASKED
		t.Fatalf("after JUNK: %q %v", r, err)
	}
}

// TestBreaker: the upstream goes away; failed dials open the breaker, which
// then fails calls at once without sending them. The upstream comes back on
// the same port, then on a new one; the half-open probe closes the breaker.
func TestBreaker(t *testing.T) {
	e := setup(t, Options{Size: 2, Threshold: 3, OpenFor: 100 * time.Millisecond,
		BackoffMin: 5 * time.Millisecond, BackoffMax: 40 * time.Millisecond})
	if r, err := e.do("ECHO b0"); err != nil {
		t.Fatal(r, err)
	}
	var refused []string // ids failed with ErrCircuitOpen: never sent
	n := 0
	// until succeeds: requests, each with a fresh id, until one gets its
	// reply (ok) or the error stop wants; other errors must be in allowed.
	until := func(prefix string, stop error, allowed ...error) {
		t.Helper()
		e.eventually(prefix, func() bool {
			n++
			id := fmt.Sprint(prefix, n)
			r, err := e.do("ECHO " + id)
			if errors.Is(err, ErrCircuitOpen) {
				refused = append(refused, id)
			}
			switch {
			case stop == nil && err == nil:
				if r != "OK "+id {
					t.Fatalf("%s: reply %q", id, r)
				}
				return true
			case stop != nil && errors.Is(err, stop):
				return true
			case err == nil:
				return false
			}
			for _, a := range allowed {
				if errors.Is(err, a) {
					return false
				}
			}
			t.Fatalf("%s: %v", id, err)
			return false
		})
	}

	e.up.Stop()
	until("down", ErrCircuitOpen, ErrConnLost)
	if s := e.stats(); s.Opened == 0 || s.Breaker == Closed {
		t.Fatalf("breaker not open: %+v", s)
	}
	if err := e.up.Restart(""); err != nil { // same port
		t.Fatal(err)
	}
	until("same", nil, ErrCircuitOpen, ErrConnLost)
	// The worker answers the caller, then tells the manager: the probe's
	// success reaches the breaker a moment after its caller has the reply.
	e.eventually("the breaker closed by the probe's success", func() bool { return e.stats().Breaker == Closed })

	e.up.Stop()
	if err := e.up.Restart("127.0.0.1:0"); err != nil { // a new port
		t.Fatal(err)
	}
	if err := e.pool.SetAddr(e.sys, e.up.Addr()); err != nil {
		t.Fatal(err)
	}
	until("moved", nil, ErrCircuitOpen, ErrConnLost)
	for _, id := range refused {
		if e.up.Seen(id) != 0 {
			t.Errorf("%s failed with ErrCircuitOpen but reached the upstream", id)
		}
	}
	if len(refused) == 0 {
		t.Error("no call was refused by the open breaker")
	}
}

// TestCancel: a caller that gives up while its request waits for a
// connection (cancelled ctx, or its deadline) gets ctx's error at once, and
// its request is never sent.
func TestCancel(t *testing.T) {
	e := setup(t, Options{Size: 1, RequestTimeout: patience})
	bg, stopAll := context.WithTimeout(context.Background(), patience)
	defer stopAll()
	held := e.async(bg, "HOLD c1") // takes the only connection
	e.eventually("HOLD c1 at the upstream", func() bool { return e.up.Seen("c1") == 1 })

	ctx, cancel := context.WithCancel(bg)
	cancelled := e.async(ctx, "ECHO c2")
	e.eventually("c2 queued", func() bool { return e.stats().Queued == 1 })
	cancel()
	if o := wait(t, cancelled); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("cancelled call: %+v", o)
	}
	dl, cancel2 := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel2()
	if o := wait(t, e.async(dl, "ECHO c3")); !errors.Is(o.err, actor.ErrTimeout) ||
		!errors.Is(o.err, context.DeadlineExceeded) {
		t.Fatalf("call past its deadline: %+v", o)
	}

	e.up.Release()
	if o := wait(t, held); o.err != nil || o.reply != "OK c1" {
		t.Fatalf("held call: %+v", o)
	}
	if r, err := e.do("ECHO c4"); r != "OK c4" || err != nil {
		t.Fatalf("next call: %q %v", r, err)
	}
	for _, id := range []string{"c2", "c3"} {
		if n := e.up.Seen(id); n != 0 {
			t.Errorf("%s was given up by its caller but sent %d times", id, n)
		}
	}
}

// TestCheckout: a lease is the holder's alone; the pool takes it back when
// an actor holder dies, on checkin, and when a lease times out.
func TestCheckout(t *testing.T) {
	e := setup(t, Options{Size: 1, LeaseTimeout: time.Hour})
	type leased struct {
		l     Lease
		reply string
		err   error
	}
	ch := make(chan leased, 1)
	holder, err := e.sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if msg != "go" {
			return
		}
		l, err := e.pool.Checkout(c, patience)
		if err != nil {
			ch <- leased{err: err}
			return
		}
		r, err := l.Exec(c, "ECHO k1", patience)
		ch <- leased{l, r, err}
	}))
	if err != nil {
		t.Fatal(err)
	}
	e.sys.Send(holder, "go")
	var h leased
	select {
	case h = <-ch:
	case <-time.After(patience):
		t.Fatal("no lease")
	}
	if h.err != nil || h.reply != "OK k1" {
		t.Fatalf("holder: %+v", h)
	}
	routed := e.async(context.Background(), "ECHO k2")
	e.eventually("k2 queued behind the lease", func() bool {
		s := e.stats()
		return s.Queued == 1 && s.Leased == 1
	})
	if _, err := h.l.Exec(e.sys, "ECHO k3", patience); err != nil {
		t.Fatalf("the lease is usable by whoever holds it: %v", err)
	}
	e.sys.Exit(holder, actor.Kill) // dies without checking in
	if o := wait(t, routed); o.err != nil || o.reply != "OK k2" {
		t.Fatalf("routed after the holder's death: %+v", o)
	}
	if _, err := h.l.Exec(e.sys, "ECHO k4", patience); !errors.Is(err, ErrNotLeased) {
		t.Fatalf("dead holder's lease: %v", err)
	}

	// Checkout and checkin from plain Go code.
	l, err := e.pool.Checkout(e.sys, patience)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := l.Exec(e.sys, "ECHO k5", patience); r != "OK k5" || err != nil {
		t.Fatal(r, err)
	}
	e.pool.Checkin(e.sys, l)
	e.pool.Checkin(e.sys, l) // twice: nothing
	if r, err := e.do("ECHO k6"); r != "OK k6" || err != nil {
		t.Fatal(r, err)
	}
	if _, err := l.Exec(e.sys, "ECHO k7", patience); !errors.Is(err, ErrNotLeased) {
		t.Fatalf("checked-in lease: %v", err)
	}

	// A second pool in the same System, whose leases expire.
	short, _, err := Start(e.sys, Options{Name: "short", Addr: e.up.Addr(), Size: 1,
		LeaseTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	l, err = short.Checkout(e.sys, patience)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := short.Call(e.sys, "ECHO k8", patience); r != "OK k8" || err != nil {
		t.Fatalf("after the lease expired: %q %v", r, err)
	}
	if _, err := l.Exec(e.sys, "ECHO k9", patience); !errors.Is(err, ErrNotLeased) {
		t.Fatalf("expired lease: %v", err)
	}
	for _, id := range []string{"k4", "k7", "k9"} {
		if e.up.Seen(id) != 0 {
			t.Errorf("%s sent on a lease not held", id)
		}
	}
}

// workers lists the connection workers' pids.
func (e *env) workers() []actor.Pid {
	e.t.Helper()
	top, err := supervisor.WhichChildren(e.sys, e.sup)
	if err != nil || len(top) != 2 {
		e.t.Fatal(top, err)
	}
	kids, err := supervisor.WhichChildren(e.sys, top[1].Pid)
	if err != nil {
		e.t.Fatal(err)
	}
	var ps []actor.Pid
	for _, k := range kids {
		ps = append(ps, k.Pid)
	}
	return ps
}

// TestCrashes: a worker killed mid-request, and the manager killed with a
// request at a worker: each caller gets one clear error at once (not at its
// timeout), and the supervisors bring the pool back.
func TestCrashes(t *testing.T) {
	e := setup(t, Options{Size: 2, RequestTimeout: patience})
	held := e.async(context.Background(), "HOLD x1")
	e.eventually("x1 at the upstream", func() bool { return e.up.Seen("x1") == 1 })
	for _, w := range e.workers() {
		e.sys.Exit(w, actor.Kill)
	}
	if o := wait(t, held); !errors.Is(o.err, ErrWorkerDied) {
		t.Fatalf("request of a killed worker: %+v", o)
	}
	e.eventually("workers back", func() bool { s := e.stats(); return s.Connected == 2 })
	if r, err := e.do("ECHO x2"); r != "OK x2" || err != nil {
		t.Fatal(r, err)
	}

	held = e.async(context.Background(), "HOLD x3")
	e.eventually("x3 at the upstream", func() bool { return e.up.Seen("x3") == 1 })
	m, _ := e.sys.Whereis(e.pool.Name)
	e.sys.Exit(m, actor.Kill)
	if o := wait(t, held); !errors.Is(o.err, actor.ErrNoProc) {
		t.Fatalf("request routed by a killed manager: %+v", o)
	}
	e.up.Release() // the old worker, if still there, must not answer twice
	e.eventually("pool back", func() bool {
		s, err := e.pool.Stats(e.sys)
		return err == nil && s.Connected == 2
	})
	if r, err := e.do("ECHO x4"); r != "OK x4" || err != nil {
		t.Fatal(r, err)
	}
}

// TestShutdown: Shutdown with requests at the upstream and in the queue
// answers each caller with an error, and returns.
func TestShutdown(t *testing.T) {
	e := setup(t, Options{Size: 2, RequestTimeout: patience})
	var outs []<-chan outcome
	for i := range 5 {
		outs = append(outs, e.async(context.Background(), fmt.Sprint("HOLD s", i)))
	}
	e.eventually("2 at the upstream, 3 queued", func() bool {
		s := e.stats()
		return s.Busy == 2 && s.Queued == 3
	})
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := e.sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for i, ch := range outs {
		if o := wait(t, ch); !errors.Is(o.err, ErrPoolClosed) {
			t.Errorf("s%d: %+v, want ErrPoolClosed", i, o)
		}
	}
}
