package actor_test

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testlog"
)

// A metrics exporter polls Stats and Info while the System is busy: ping-pong
// pairs, short-lived actors, calls that time out, sends to dead pids. Every
// cumulative counter must be monotonic, the gauges sane.
func TestNewUser14StatsPolledUnderLoad(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 4, Logger: func(string, ...any) {}})
	stop := make(chan struct{})
	var wg sync.WaitGroup

	// ping-pong pairs
	var pids []actor.Pid
	for i := 0; i < 50; i++ {
		var peer atomic.Value
		a, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if n, ok := msg.(int); ok && n > 0 {
				c.Send(peer.Load().(actor.Pid), n-1)
			}
		}))
		b, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if n, ok := msg.(int); ok && n > 0 {
				c.Send(a, n-1)
			}
		}))
		peer.Store(b)
		pids = append(pids, a, b)
	}
	wg.Add(1)
	go func() { // keeps the pairs busy
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, p := range pids[:10] {
				sys.Send(p, 1000)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Add(1)
	go func() { // churn: short-lived actors, sends to the dead
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			p, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
				if msg == "die" {
					c.Stop(actor.Normal)
				}
			}))
			if err != nil {
				t.Error(err)
				return
			}
			sys.Send(p, 1)
			sys.Send(p, "die")
			sys.Send(p, 2) // may be dropped
		}
	}()
	wg.Add(1)
	go func() { // late replies
		defer wg.Done()
		slow, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if r, ok := msg.(actor.Request); ok {
				c.Sleep(2 * time.Millisecond)
				c.Reply(r, 1)
			}
		}))
		for {
			select {
			case <-stop:
				return
			default:
			}
			sys.Call(slow, "x", 500*time.Microsecond)
		}
	}()

	var prev actor.Stats
	prevHandled := map[actor.Pid]uint64{}
	deadline := time.Now().Add(1 * time.Second)
	polls := 0
	for time.Now().Before(deadline) {
		st := sys.Stats()
		polls++
		if st.Live < 0 || st.Timers < 0 || st.Workers < 0 || st.SpareWorkers < 0 || st.GlobalQueue < 0 {
			t.Fatalf("negative gauge: %+v", st)
		}
		if st.SpareWorkers > st.Workers {
			t.Errorf("SpareWorkers %d > Workers %d", st.SpareWorkers, st.Workers)
		}
		if uint64(st.Live) > st.Spawned {
			t.Errorf("Live %d > Spawned %d", st.Live, st.Spawned)
		}
		if st.Spawned < prev.Spawned || st.Dropped < prev.Dropped || st.Orphaned < prev.Orphaned || st.LateReplies < prev.LateReplies {
			t.Errorf("a counter went backwards:\nbefore %+v\nafter  %+v", prev, st)
		}
		if len(st.Schedulers) != 4 {
			t.Fatalf("%d SchedulerStats, want 4", len(st.Schedulers))
		}
		if prev.Schedulers != nil {
			for i, s := range st.Schedulers {
				p := prev.Schedulers[i]
				if s.ID != i {
					t.Errorf("Schedulers[%d].ID = %d", i, s.ID)
				}
				if s.Activations < p.Activations || s.Parks < p.Parks || s.Steals < p.Steals ||
					s.TimekeeperWakes < p.TimekeeperWakes || s.Handoffs < p.Handoffs || s.Resumes < p.Resumes || s.Retakes < p.Retakes {
					t.Errorf("scheduler %d counter went backwards:\nbefore %+v\nafter  %+v", i, p, s)
				}
				if s.Queued < 0 {
					t.Errorf("scheduler %d Queued %d", i, s.Queued)
				}
			}
		}
		prev = st
		p := pids[rand.Intn(len(pids))]
		inf, err := sys.Info(p)
		if err != nil {
			t.Fatalf("Info(%v): %v", p, err)
		}
		if inf.MailboxLen < 0 {
			t.Errorf("Info MailboxLen %d", inf.MailboxLen)
		}
		if inf.Handled < prevHandled[p] {
			t.Errorf("Info(%v).Handled went backwards: %d -> %d", p, prevHandled[p], inf.Handled)
		}
		prevHandled[p] = inf.Handled
		switch inf.State {
		case "queued", "running", "notified", "parked", "blocked":
		default:
			t.Errorf("Info State %q not documented", inf.State)
		}
	}
	close(stop)
	wg.Wait()
	st := sys.Stats()
	t.Logf("%d polls; final %+v", polls, st)
	if st.Dropped == 0 || st.LateReplies == 0 {
		t.Errorf("workload should have dropped messages and late replies: %+v", st)
	}
}

// The watchdog: on a 1-scheduler System, one handler spins in a CPU loop and
// another blocks in time.Sleep and a plain channel receive, outside the
// runtime; a third actor must keep answering calls.
func TestNewUser14WatchdogKeepsOthersRunning(t *testing.T) {
	for _, scheds := range []int{1, 2} {
		var sink testlog.Sink
		sys := start(t, actor.Config{Schedulers: scheds, Logger: sink.Log})
		release := make(chan struct{})
		var spinStop atomic.Bool
		var stuck atomic.Int32
		spin, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			stuck.Add(1)
			for !spinStop.Load() {
			}
		}))
		sleeper, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			stuck.Add(1)
			for !spinStop.Load() {
				time.Sleep(10 * time.Millisecond)
			}
		}))
		blocker, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			stuck.Add(1)
			<-release
		}))
		echo, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if r, ok := msg.(actor.Request); ok {
				c.Reply(r, r.Msg)
			}
		}))
		for _, p := range []actor.Pid{spin, sleeper, blocker} {
			sys.Send(p, "go")
		}
		eventually(t, 5*time.Second, "the three handlers stuck", func() bool { return stuck.Load() == 3 })
		// They stay stuck until released below, so every call answered
		// here was answered beside them.
		for i := 0; i < 20; i++ {
			v, err := actor.Call[int](sys, echo, i, 10*time.Second)
			if err != nil || v != i {
				t.Fatalf("scheds=%d: call %d: %v %v", scheds, i, v, err)
			}
		}
		st := sys.Stats()
		var retakes uint64
		for _, s := range st.Schedulers {
			retakes += s.Retakes
		}
		if retakes == 0 {
			t.Errorf("scheds=%d: no Retakes counted with three stuck handlers: %+v", scheds, st)
		}
		inf, err := sys.Info(spin)
		t.Logf("scheds=%d: retakes=%d workers=%d spin info %+v %v; log %q", scheds, retakes, st.Workers, inf, err, sink.All())
		spinStop.Store(true)
		close(release)
	}
}

// Overload: a slow consumer with a bounded mailbox under a flood from several
// senders. Every Send either queues (and is handled, or counted as dropped
// when the consumer dies) or fails with ErrMailboxFull; nothing vanishes.
func TestNewUser14BoundedMailboxFlood(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	const bound = 16
	var handled atomic.Int64
	gate := make(chan struct{})
	atGate := make(chan struct{}, 2)
	cons, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if msg == "gate" {
			atGate <- struct{}{}
			<-gate
			return
		}
		handled.Add(1)
		c.Sleep(100 * time.Microsecond)
	}), actor.MailboxBound(bound))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(cons, "gate")
	recv(t, atGate)
	var ok, full atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				switch err := sys.Send(cons, i); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, actor.ErrMailboxFull):
					full.Add(1)
				default:
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	inf, _ := sys.Info(cons)
	if inf.MailboxLen > bound {
		t.Errorf("MailboxLen %d over the bound %d", inf.MailboxLen, bound)
	}
	// While the consumer is stuck, the mailbox holds exactly bound messages.
	if ok.Load() != bound {
		t.Errorf("%d sends accepted while the consumer was stuck, want %d", ok.Load(), bound)
	}
	close(gate)
	eventually(t, 5*time.Second, "consumer drained", func() bool { return handled.Load() == ok.Load() })
	// Now fill it again, kill it: what was queued is counted as dropped.
	gate = make(chan struct{})
	sys.Send(cons, "gate")
	recv(t, atGate)
	queued := 0
	for sys.Send(cons, 1) == nil {
		queued++
	}
	before := sys.Stats().Dropped
	w, _ := sys.Monitor(cons)
	sys.Exit(cons, actor.Kill)
	<-w.Done()
	close(gate)
	eventually(t, 5*time.Second, "slot reclaimed", func() bool { return sys.Stats().Live == 0 })
	if d := sys.Stats().Dropped - before; d != uint64(queued) {
		t.Errorf("Dropped grew by %d for a killed actor with %d queued messages", d, queued)
	}
	// A send to the dead pid: dropped, counted, no error.
	before = sys.Stats().Dropped
	if err := sys.Send(cons, 1); err != nil {
		t.Errorf("Send to dead pid: %v", err)
	}
	if d := sys.Stats().Dropped - before; d != 1 {
		t.Errorf("Dropped grew by %d for one send to a dead pid", d)
	}
	t.Logf("ok=%d full=%d queued-at-kill=%d", ok.Load(), full.Load(), queued)
}

// Bad Config values an operator's flags could feed in.
func TestNewUser14BadConfig(t *testing.T) {
	bad := []actor.Config{
		{Schedulers: -1},
		{MaxActors: -1},
		{Budget: -1},
		{MaxSpareWorkers: -1},
		{Schedulers: 1 << 20},
		{MaxActors: 1 << 62},
	}
	for _, cfg := range bad {
		sys, err := actor.Start(cfg)
		if err == nil {
			sys.Shutdown(context.Background())
			t.Errorf("Start(%+v) = nil error", cfg)
			continue
		}
		if !errors.Is(err, actor.ErrBadConfig) {
			t.Errorf("Start(%+v) = %v, want ErrBadConfig", cfg, err)
		}
	}
	// Valid odd values: negative watchdog (off), zero everything, nil Logger.
	for _, cfg := range []actor.Config{{WatchdogThreshold: -1}, {}, {MaxActors: 1, Schedulers: 1, Budget: 1, MaxSpareWorkers: 0}} {
		sys, err := actor.Start(cfg)
		if err != nil {
			t.Errorf("Start(%+v): %v", cfg, err)
			continue
		}
		p, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if r, ok := msg.(actor.Request); ok {
				c.Reply(r, 1)
			}
		}))
		if err != nil {
			t.Errorf("Spawn with %+v: %v", cfg, err)
		} else if _, err := sys.Call(p, 0, time.Second); err != nil {
			t.Errorf("Call with %+v: %v", cfg, err)
		}
		if err := sys.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown with %+v: %v", cfg, err)
		}
	}
}

// A full slab: ErrTooManyActors, no panic; a supervisor-style retry succeeds
// once a slot is free; Spawned counts only what started; a Name given to a
// refused spawn is not left registered.
func TestNewUser14FullSlab(t *testing.T) {
	sys := start(t, actor.Config{MaxActors: 4, Schedulers: 1})
	var pids []actor.Pid
	for i := 0; i < 4; i++ {
		p, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, p)
	}
	before := sys.Stats()
	_, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("nu14full"))
	if !errors.Is(err, actor.ErrTooManyActors) {
		t.Fatalf("5th spawn: %v", err)
	}
	if _, ok := sys.Whereis("nu14full"); ok {
		t.Error("refused spawn left its name registered")
	}
	if _, err := actor.StartServer(sys, &actor.ServerBase{}); !errors.Is(err, actor.ErrTooManyActors) {
		t.Errorf("StartServer on a full slab: %v", err)
	}
	if st := sys.Stats(); st.Spawned != before.Spawned || st.Live != 4 {
		t.Errorf("refused spawns changed Stats: %+v -> %+v", before, st)
	}
	w, _ := sys.Monitor(pids[0])
	sys.Exit(pids[0], actor.Kill)
	<-w.Done()
	eventually(t, 5*time.Second, "a slot freed", func() bool {
		_, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
		return err == nil
	})
	_ = strings.Contains
}

// MailboxBound(n): "a Send that finds n messages queued fails". The message
// a handler is busy with is no longer queued, so while it runs (here blocked
// outside the runtime, as a slow consumer's CPU-bound or cgo work would be),
// n more sends must be accepted. Only n-1 were: the bound counted the
// messages the running activation had taken, since consumption was recorded
// per activation; with a consumer that takes several messages in one
// activation, senders were refused while the mailbox was nearly empty.
func TestNewUser14BoundCountsOnlyQueued(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1, WatchdogThreshold: -1})
	entered := make(chan int, 16)
	gate := make(chan struct{})
	cons, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		entered <- msg.(int)
		<-gate
	}), actor.MailboxBound(2))
	if err != nil {
		t.Fatal(err)
	}
	defer close(gate)
	if err := sys.Send(cons, 0); err != nil {
		t.Fatal(err)
	}
	next := 1
	for want := 0; want < 3; want++ {
		if got := recv(t, entered); got != want {
			t.Fatalf("handled %d, want %d", got, want)
		}
		// want is being handled, and the queue holds want+1..next-1: fill
		// it to the bound.
		for next-(want+1) < 2 {
			if err := sys.Send(cons, next); err != nil {
				t.Fatalf("while handling %d with %d queued: %v (the bound is 2)", want, next-(want+1), err)
			}
			next++
		}
		if err := sys.Send(cons, -1); !errors.Is(err, actor.ErrMailboxFull) {
			t.Fatalf("while handling %d, a third queued send: %v, want ErrMailboxFull", want, err)
		}
		gate <- struct{}{}
	}
}

// SchedulerStats.Activations is a cumulative counter, as an exporter treats
// it (a Prometheus counter that decreases is read as a reset). It went
// backwards when the watchdog retired a role: Stats could read the retired
// role's count both in the index's total (moved there by the retake) and
// from the role itself, then the fresh role's zero.
func TestNewUser14ActivationsMonotonicAcrossRetakes(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1, WatchdogThreshold: time.Millisecond})
	var stop atomic.Bool
	defer stop.Store(true)
	spin, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		for t0 := time.Now(); time.Since(t0) < 5*time.Millisecond && !stop.Load(); {
		}
		if !stop.Load() {
			c.Send(c.Self(), msg)
		}
	}))
	var peer actor.Pid
	ping, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if !stop.Load() {
			c.Send(peer, msg)
		}
	}))
	peer, _ = sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if !stop.Load() {
			c.Send(ping, msg)
		}
	}))
	sys.Send(spin, 1)
	sys.Send(ping, 1)
	var last uint64
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		s := sys.Stats().Schedulers[0]
		if s.Activations < last {
			t.Fatalf("Activations went backwards: %d -> %d (retakes %d)", last, s.Activations, s.Retakes)
		}
		last = s.Activations
	}
	if s := sys.Stats().Schedulers[0]; s.Retakes == 0 {
		t.Skipf("no retake in a second: %+v", s)
	}
}
