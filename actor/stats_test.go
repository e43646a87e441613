package actor_test

import (
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/colonyrt/colony/actor"
)

// A metrics exporter polls Stats and Info while the System is busy: ping-pong
// pairs, short-lived actors, calls that time out, sends to dead pids. Every
// cumulative counter must be monotonic, the gauges sane.
func TestStatsCountersMonotonicUnderLoad(t *testing.T) {
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

// SchedulerStats.Activations is a cumulative counter, as an exporter treats
// it (a Prometheus counter that decreases is read as a reset). It went
// backwards when the watchdog retired a role: Stats could read the retired
// role's count both in the index's total (moved there by the retake) and
// from the role itself, then the fresh role's zero.
func TestActivationsMonotonicAcrossRetakes(t *testing.T) {
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

// Context.Info's MailboxLen is process_info(self(), message_queue_len): the
// messages still to be taken, not the one being handled nor the others this
// activation has already taken; messages a selective receive skipped still
// count. (Info read the mailbox's count, which the activation settles when
// it ends.)
func TestContextInfoMailboxLenIsExact(t *testing.T) {
	bubble(t, actor.Config{Schedulers: 1}, func(t *testing.T, sys *actor.System) {
		lens := make(chan []int, 1)
		pid := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			mlen := func() int {
				info, err := c.Info()
				if err != nil {
					t.Errorf("Context.Info: %v", err)
				}
				return info.MailboxLen
			}
			switch m {
			case "hold":
				c.Sleep(time.Second) // the test queues a, b, probe, c meanwhile
			case "probe":
				// This activation has taken a, b and probe; c is queued.
				got := []int{mlen()}
				c.Send(c.Self(), "y")
				c.Send(c.Self(), "x")
				got = append(got, mlen()) // c, y, x
				if m, err := c.Receive(func(m any) bool { return m == "x" }, 0); m != "x" || err != nil {
					t.Errorf("Receive: (%v, %v), want x", m, err)
				}
				got = append(got, mlen()) // c and y, skipped
				c.Sleep(time.Millisecond)
				got = append(got, mlen()) // the same after a wait
				lens <- got
			}
		}))
		if err := sys.Send(pid, "hold"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if st := sys.SlotState(pid); st != "blocked" {
			t.Fatalf("state %s, want blocked", st)
		}
		for _, m := range []string{"a", "b", "probe", "c"} {
			if err := sys.Send(pid, m); err != nil {
				t.Fatal(err)
			}
		}
		got := <-lens
		want := []int{1, 3, 2, 2}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("MailboxLen from the handler: %v, want %v", got, want)
			}
		}
	})
}
