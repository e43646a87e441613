package pool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/pool"
	"github.com/colonyrt/colony/supervisor"
)

// TestCheckoutOrder: LIFO hands out the worker checked in last, FIFO the
// one checked in first.
func TestCheckoutOrder(t *testing.T) {
	sys, _ := startSys(t)
	for _, fifo := range []bool{false, true} {
		opts := []pool.Option{pool.Size(3)}
		if fifo {
			opts = append(opts, pool.FIFO())
		}
		p := startPool(t, sys, opts...)
		var ws []actor.Pid
		for range 3 {
			w, err := p.Checkout(sys, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
		}
		p.Checkin(sys, ws[1])
		p.Checkin(sys, ws[0])
		w, err := p.Checkout(sys, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]actor.Pid{false: ws[0], true: ws[1]}[fifo]; w != want {
			t.Errorf("fifo %v: got %v, want %v", fifo, w, want)
		}
		p.Stop(context.Background())
	}
}

// TestOverflowShrinks: past Size, checkouts start overflow workers up to
// MaxOverflow; their checkins stop them, back down to Size.
func TestOverflowShrinks(t *testing.T) {
	sys, _ := startSys(t)
	p := startPool(t, sys, pool.Size(1), pool.MaxOverflow(2))
	var ws []actor.Pid
	for range 3 {
		w, err := p.TryCheckout(sys)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	if _, err := p.TryCheckout(sys); !errors.Is(err, pool.ErrFull) {
		t.Fatalf("past the overflow: %v, want ErrFull", err)
	}
	if st, _ := p.Status(sys); st.Overflow != 2 || st.Busy != 3 {
		t.Fatalf("status %+v", st)
	}
	for _, w := range ws {
		p.Checkin(sys, w)
	}
	st, err := p.Status(sys)
	if err != nil || st.Overflow != 0 || st.Idle != 1 || st.Busy != 0 {
		t.Fatalf("after the checkins: %+v %v", st, err)
	}
	eventually(t, 5*time.Second, "two overflow workers stopped", func() bool {
		n := 0
		for _, w := range ws {
			if sys.Alive(w) {
				n++
			}
		}
		return n == 1
	})
}

// TestCheckoutTimeout: a checkout that waits past its timeout fails with
// ErrTimeout, and the worker checked in later is not lost to it.
func TestCheckoutTimeout(t *testing.T) {
	sys, _ := startSys(t)
	p := startPool(t, sys, pool.Size(1))
	w, _ := p.Checkout(sys, time.Second)
	if _, err := p.Checkout(sys, 20*time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("%v, want ErrTimeout", err)
	}
	p.Checkin(sys, w)
	if st, _ := p.Status(sys); st.Idle != 1 || st.Waiting != 0 {
		t.Fatalf("after the checkin: %+v", st)
	}
	if got, err := p.Checkout(sys, time.Second); got != w || err != nil {
		t.Fatalf("%v %v", got, err)
	}
}

// TestCheckoutContext: a cancelled ctx ends the wait; the queue forgets it.
func TestCheckoutContext(t *testing.T) {
	sys, _ := startSys(t)
	p := startPool(t, sys, pool.Size(1))
	w, _ := p.Checkout(sys, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := p.CheckoutContext(ctx, sys); done <- err }()
	eventually(t, 5*time.Second, "the checkout waiting", func() bool { st, _ := p.Status(sys); return st.Waiting == 1 })
	cancel()
	if err := recv(t, done, "the cancelled checkout"); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	p.Checkin(sys, w)
	if st, _ := p.Status(sys); st.Idle != 1 || st.Waiting != 0 {
		t.Fatalf("%+v", st)
	}
}

// TestMaxWaiting: a checkout past MaxWaiting waiting ones is refused at once.
func TestMaxWaiting(t *testing.T) {
	sys, _ := startSys(t)
	p := startPool(t, sys, pool.Size(1), pool.MaxWaiting(1))
	w, _ := p.Checkout(sys, time.Second)
	got := make(chan actor.Pid, 1)
	go func() { w, _ := p.Checkout(sys, 10*time.Second); got <- w }()
	eventually(t, 5*time.Second, "one waiting", func() bool { st, _ := p.Status(sys); return st.Waiting == 1 })
	if _, err := p.Checkout(sys, time.Second); !errors.Is(err, pool.ErrQueueFull) {
		t.Fatalf("%v, want ErrQueueFull", err)
	}
	p.Checkin(sys, w)
	if g := recv(t, got, "the waiting checkout"); g != w {
		t.Fatalf("%v", g)
	}
}

// TestHolderDeathReturnsWorker: the worker of a holder that dies goes to
// the next waiting checkout.
func TestHolderDeathReturnsWorker(t *testing.T) {
	sys, _ := startSys(t)
	p := startPool(t, sys, pool.Size(1))
	held := make(chan actor.Pid, 1)
	h, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		w, err := p.Checkout(c, time.Second)
		if err != nil {
			panic(err)
		}
		held <- w
		c.Receive(func(any) bool { return false }, actor.Infinity) // hold it for ever
	}))
	sys.Send(h, "go")
	w := recv(t, held, "the holder's worker")
	got := make(chan actor.Pid, 1)
	go func() { w, _ := p.Checkout(sys, 10*time.Second); got <- w }()
	eventually(t, 5*time.Second, "one waiting", func() bool { st, _ := p.Status(sys); return st.Waiting == 1 })
	sys.Exit(h, actor.Kill)
	if g := recv(t, got, "the dead holder's worker"); g != w {
		t.Fatalf("%v, want %v", g, w)
	}
}

// TestWorkerCrashReplaced: a worker that dies while checked out is
// replaced; its holder's calls to it fail and its checkin does nothing.
func TestWorkerCrashReplaced(t *testing.T) {
	sys, logs := startSys(t)
	var exits atomic.Int64
	p := startPool(t, sys, pool.Size(2), pool.Hooks(&supervisor.Hooks{
		ChildExited: func(actor.Pid, string, actor.Pid, actor.Reason, bool) { exits.Add(1) }}))
	w, _ := p.Checkout(sys, time.Second)
	if _, err := actor.Call[actor.Pid](sys, w, crash{}, time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("the crash call: %v", err)
	}
	eventually(t, 5*time.Second, "a replacement", func() bool {
		st, _ := p.Status(sys)
		return st.Idle == 2 && st.Busy == 0
	})
	p.Checkin(sys, w) // stale: nothing
	if st, _ := p.Status(sys); st.Idle != 2 {
		t.Fatalf("after the stale checkin: %+v", st)
	}
	if exits.Load() != 1 {
		t.Errorf("Hooks saw %d exits", exits.Load())
	}
	eventually(t, 5*time.Second, "the crash reported", func() bool { return len(logs.Matching("crash asked")) > 0 })
}

// TestReplacementRetried: a worker whose replacement fails to start is
// owed (Missing) and started after a backoff.
func TestReplacementRetried(t *testing.T) {
	sys, logs := startSys(t)
	var fail atomic.Bool
	p, err := pool.Start(sys, func(c *actor.Context) (actor.Pid, error) {
		if fail.Load() {
			return actor.Pid{}, errors.New("no upstream")
		}
		return startWorker(c)
	}, pool.Size(1))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := p.Checkout(sys, time.Second)
	fail.Store(true)
	sys.Exit(w, actor.Kill)
	eventually(t, 5*time.Second, "the worker owed", func() bool { st, _ := p.Status(sys); return st.Missing == 1 })
	if _, err := p.TryCheckout(sys); !errors.Is(err, pool.ErrFull) {
		t.Fatalf("%v", err)
	}
	fail.Store(false)
	eventually(t, 5*time.Second, "the worker restarted", func() bool {
		st, _ := p.Status(sys)
		return st.Missing == 0 && st.Idle == 1
	})
	if len(logs.Matching("no upstream")) == 0 {
		t.Errorf("the failed start was not reported: %q", logs.All())
	}
}

// TestTransaction: the worker is checked in after f, also when f panics.
func TestTransaction(t *testing.T) {
	sys, _ := startSys(t)
	p := startPool(t, sys, pool.Size(1))
	err := p.Transaction(sys, time.Second, func(w actor.Pid) error {
		got, err := actor.Call[actor.Pid](sys, w, who{}, time.Second)
		if got != w {
			return fmt.Errorf("who: %v %v", got, err)
		}
		return errors.New("from f")
	})
	if err == nil || err.Error() != "from f" {
		t.Fatalf("%v", err)
	}
	func() {
		defer func() { recover() }()
		p.Transaction(sys, time.Second, func(actor.Pid) error { panic("in f") })
	}()
	if st, _ := p.Status(sys); st.Idle != 1 || st.Busy != 0 {
		t.Fatalf("after the transactions: %+v", st)
	}
}

// TestStopAndHandles: Stop stops the manager and its workers; a handle of
// a pool that does not run answers ErrNoProc; Stop again is nil.
func TestStopAndHandles(t *testing.T) {
	sys, _ := startSys(t)
	p := startPool(t, sys, pool.Size(2))
	w, _ := p.Checkout(sys, time.Second)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sys.Alive(w) {
		t.Error("a worker outlived Stop")
	}
	if _, err := p.Checkout(sys, time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Errorf("Checkout after Stop: %v", err)
	}
	if err := p.Checkin(sys, w); !errors.Is(err, actor.ErrNoProc) {
		t.Errorf("Checkin after Stop: %v", err)
	}
	if _, err := p.Status(sys); !errors.Is(err, actor.ErrNoProc) {
		t.Errorf("Status after Stop: %v", err)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestEmbedded: ChildSpec runs a Pool in a tree, which restarts it; the
// handle follows the restart; Stop is ErrEmbedded; a second tree may not
// run it at once.
func TestEmbedded(t *testing.T) {
	sys, _ := startSys(t)
	p, err := pool.New(startWorker, pool.Size(2), pool.Name("test.pool"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{p.ChildSpec("pool")}}); err != nil {
		t.Fatal(err)
	}
	if pid, ok := sys.Whereis("test.pool"); !ok || pid != p.Pid() {
		t.Fatalf("name %v %v, pid %v", pid, ok, p.Pid())
	}
	if err := p.Stop(context.Background()); !errors.Is(err, pool.ErrEmbedded) {
		t.Errorf("Stop: %v", err)
	}
	if _, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{p.ChildSpec("again")}}); !errors.Is(err, pool.ErrRunning) {
		t.Errorf("a second tree: %v", err)
	}
	old := p.Pid()
	sys.Exit(old, actor.Kill)
	eventually(t, 5*time.Second, "the pool restarted", func() bool { return !p.Pid().IsZero() && p.Pid() != old })
	if w, err := p.Checkout(sys, time.Second); err != nil || !sys.Alive(w) {
		t.Fatalf("after the restart: %v %v", w, err)
	}
}

// TestBadOptions: each bad argument is ErrBadOption and starts nothing.
func TestBadOptions(t *testing.T) {
	for name, opts := range map[string][]pool.Option{
		"zero size":            {pool.Size(0)},
		"huge size":            {pool.Size(pool.MaxWorkers + 1)},
		"negative overflow":    {pool.MaxOverflow(-1)},
		"zero max waiting":     {pool.MaxWaiting(0)},
		"zero worker shutdown": {pool.WorkerShutdown(0)},
		"empty name":           {pool.Name("")},
		"nil option":           {nil},
		"router option":        {pool.LeastLoaded()},
	} {
		if p, err := pool.New(startWorker, opts...); !errors.Is(err, pool.ErrBadOption) || p != nil {
			t.Errorf("%s: %v, %v", name, p, err)
		}
	}
	for name, opts := range map[string][]pool.Option{
		"pool option": {pool.MaxOverflow(1)},
		"FIFO":        {pool.FIFO()},
		"zero size":   {pool.Size(0)},
	} {
		if r, err := pool.NewRouter(startWorker, opts...); !errors.Is(err, pool.ErrBadOption) || r != nil {
			t.Errorf("router, %s: %v, %v", name, r, err)
		}
	}
	if _, err := pool.New(nil); !errors.Is(err, pool.ErrBadOption) {
		t.Errorf("nil StartFunc: %v", err)
	}
	if _, err := pool.Start(nil, startWorker); !errors.Is(err, actor.ErrNilSystem) {
		t.Errorf("nil System: %v", err)
	}
}

// TestStartErrors: a worker that fails to start fails the pool's start
// (and frees the handle for another try); a stopped System is ErrStopped.
func TestStartErrors(t *testing.T) {
	sys, _ := startSys(t)
	boom := errors.New("boom")
	if _, err := pool.Start(sys, func(*actor.Context) (actor.Pid, error) { return actor.Pid{}, boom }); !errors.Is(err, boom) {
		t.Errorf("failing StartFunc: %v", err)
	}
	p, _ := pool.New(func(*actor.Context) (actor.Pid, error) { return actor.Pid{}, nil })
	if _, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{p.ChildSpec("p")}}); err == nil ||
		!strings.Contains(err.Error(), "started no worker") {
		t.Errorf("a StartFunc that starts nothing: %v", err)
	}
	stopped, _ := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	stopped.Shutdown(context.Background())
	if _, err := pool.Start(stopped, startWorker); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("stopped System: %v", err)
	}
	if _, err := pool.StartRouter(stopped, startWorker); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("router, stopped System: %v", err)
	}
}
