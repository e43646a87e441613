package prom_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/observer/metrics"
	"github.com/colonyrt/colony/observer/prom"
	"github.com/colonyrt/colony/supervisor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type held struct{}

func (held) Close() error { return nil }

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestMetricsFollowAScriptedWorkload: spawns, normal stops, a kill,
// panics (two of a supervised worker, restarted), sends to a dead pid, a
// full mailbox, a held resource and a pending timer; every metric's
// value is checked against what the script did.
func TestMetricsFollowAScriptedWorkload(t *testing.T) {
	sys, err := actor.Start(actor.Config{Schedulers: 2, Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}()
	c := prom.NewCollector(sys, prom.MinScanInterval(0))
	defer c.Close()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)

	// A supervisor whose worker crashes twice and is restarted each time.
	worker := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(actor.ActorFunc(func(c *actor.Context, msg any) {
			if msg == "crash" {
				panic("scripted crash")
			}
		}))
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{Name: "shop", Intensity: 10, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "worker", Start: worker}}})
	if err != nil {
		t.Fatal(err)
	}
	workerPid := func() actor.Pid {
		kids, err := supervisor.WhichChildren(sys, sup)
		if err != nil || len(kids) != 1 {
			t.Fatalf("WhichChildren: %v %v", kids, err)
		}
		return kids[0].Pid
	}
	for i := 0; i < 2; i++ {
		old := workerPid()
		sys.Send(old, "crash")
		poll(t, "the restart", func() bool { p := workerPid(); return !p.IsZero() && p != old })
	}

	// Plain actors: two stop normally, one is killed, one panics, one stays.
	stopper := actor.ActorFunc(func(c *actor.Context, msg any) {
		switch msg {
		case "stop":
			c.Stop(actor.Normal)
		case "panic":
			panic("plain crash")
		}
	})
	var watches []*actor.Watch
	for _, how := range []string{"stop", "stop", "kill", "panic"} {
		pid, _ := sys.Spawn(stopper)
		w, _ := sys.Monitor(pid)
		watches = append(watches, w)
		if how == "kill" {
			sys.Exit(pid, actor.Kill)
		} else {
			sys.Send(pid, how)
		}
	}
	stay, _ := sys.Spawn(stopper)
	if _, err := sys.Hold(stay, held{}); err != nil {
		t.Fatal(err)
	}
	// Three sends to a dead pid.
	dead, _ := sys.Spawn(stopper)
	w, _ := sys.Monitor(dead)
	sys.Send(dead, "stop")
	watches = append(watches, w)
	for _, w := range watches {
		<-w.Done()
	}
	for i := 0; i < 3; i++ {
		sys.Send(dead, "lost")
	}
	// An actor asleep (one timer pending: its Sleep's) with 4 messages queued.
	sleeper, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) { c.Sleep(time.Hour) }))
	sys.Send(sleeper, "sleep")
	poll(t, "the sleeper to block", func() bool { i, _ := sys.Info(sleeper); return i.State == actor.StateBlocked })
	for i := 0; i < 4; i++ {
		sys.Send(sleeper, i)
	}
	// Live: the supervisor, its worker, stay and the sleeper.
	poll(t, "the dead to be reclaimed", func() bool { return sys.Stats().Live == 4 })

	expected := `
# HELP colony_actors_exited_total Actors that exited since the System started, by class of exit reason.
# TYPE colony_actors_exited_total counter
colony_actors_exited_total{reason="killed"} 1
colony_actors_exited_total{reason="normal"} 3
colony_actors_exited_total{reason="other"} 0
colony_actors_exited_total{reason="panic"} 3
colony_actors_exited_total{reason="shutdown"} 0
# HELP colony_actors_live Actor slots in use: live actors, and dead ones not yet reclaimed (a moment after their exit).
# TYPE colony_actors_live gauge
colony_actors_live 4
# HELP colony_actors_spawned_total Actors spawned since the System started.
# TYPE colony_actors_spawned_total counter
colony_actors_spawned_total 11
# HELP colony_crash_reports_total Crash reports (a handler's panic, a Server stopped abnormally) since the collector was made.
# TYPE colony_crash_reports_total counter
colony_crash_reports_total 3
# HELP colony_dead_letters_total Messages sent to dead actors, or left in a dead actor's mailbox.
# TYPE colony_dead_letters_total counter
colony_dead_letters_total 3
# HELP colony_mailbox_length Mailbox lengths of the live actors, from the last scan of every actor (one observation per actor).
# TYPE colony_mailbox_length histogram
colony_mailbox_length_bucket{le="0"} 3
colony_mailbox_length_bucket{le="1"} 3
colony_mailbox_length_bucket{le="10"} 4
colony_mailbox_length_bucket{le="100"} 4
colony_mailbox_length_bucket{le="1000"} 4
colony_mailbox_length_bucket{le="10000"} 4
colony_mailbox_length_bucket{le="100000"} 4
colony_mailbox_length_bucket{le="+Inf"} 4
colony_mailbox_length_sum 4
colony_mailbox_length_count 4
# HELP colony_sockets_open Resources held by actors (System.Hold): io's sockets and listeners.
# TYPE colony_sockets_open gauge
colony_sockets_open 1
# HELP colony_supervisor_restarts_total Child restarts by supervisor (its registered name), counted from its child_terminated reports since the collector was made; the restart that exceeded the intensity included.
# TYPE colony_supervisor_restarts_total counter
colony_supervisor_restarts_total{supervisor="shop"} 2
# HELP colony_timers_armed Timers pending: SendAfter, waits' timeouts, intervals.
# TYPE colony_timers_armed gauge
colony_timers_armed 1
`
	names := []string{"colony_actors_exited_total", "colony_actors_live", "colony_actors_spawned_total",
		"colony_crash_reports_total", "colony_dead_letters_total", "colony_mailbox_length", "colony_sockets_open",
		"colony_supervisor_restarts_total", "colony_timers_armed"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expected), names...); err != nil {
		t.Fatal(err)
	}

	// The sampled and per-scheduler metrics: present, labelled by
	// scheduler index, consistent with Stats.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	var handledTotal, handlingCount float64
	for _, mf := range mfs {
		byName[mf.GetName()] = len(mf.GetMetric())
		switch mf.GetName() {
		case "colony_messages_handled_total":
			handledTotal = mf.GetMetric()[0].GetCounter().GetValue()
		case "colony_message_handling_seconds":
			handlingCount = float64(mf.GetMetric()[0].GetHistogram().GetSampleCount())
		case "colony_scheduler_activations_total":
			var sum float64
			for i, m := range mf.GetMetric() {
				if m.GetLabel()[0].GetValue() != strconv.Itoa(i) {
					t.Fatalf("scheduler label %v", m.GetLabel())
				}
				sum += m.GetCounter().GetValue()
			}
			if sum == 0 {
				t.Fatal("no activations counted")
			}
		}
	}
	for name, want := range map[string]int{
		"colony_scheduler_activations_total": 2, "colony_scheduler_parks_total": 2, "colony_scheduler_steals_total": 2,
		"colony_scheduler_handoffs_total": 2, "colony_scheduler_resumes_total": 2, "colony_scheduler_watchdog_retakes_total": 2,
		"colony_scheduler_run_queue_length": 2, "colony_scheduler_parked_seconds_total": 2,
		"colony_scheduler_busy_seconds_total": 2,
		"colony_global_run_queue_length":      1, "colony_message_handling_seconds": 1, "colony_mailbox_latency_seconds": 1,
		"colony_messages_handled_total": 1, "colony_orphaned_operations_total": 1, "colony_late_replies_total": 1,
		"colony_workers": 1, "colony_spare_workers": 1,
	} {
		if byName[name] != want {
			t.Errorf("%s: %d series, want %d", name, byName[name], want)
		}
	}
	// Messages taken: the script's (2 crashes, 3 stops and a panic, the
	// sleeper's first, the supervisor's Exits and calls) — at least 8.
	if handledTotal < 8 || handlingCount > handledTotal {
		t.Errorf("messages handled %v, handling samples %v", handledTotal, handlingCount)
	}
	if byName["colony_scheduler_utilisation_ratio"] != 0 {
		t.Error("a utilisation gauge is exported: rate(colony_scheduler_busy_seconds_total) replaces it")
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}

// TestSupervisorGivingUpAndTemporaryChildren: a temporary child's crash is
// no restart; exceeding the intensity counts a shutdown.
func TestSupervisorGivingUpAndTemporaryChildren(t *testing.T) {
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown(context.Background())
	c := prom.NewCollector(sys, prom.MinScanInterval(-1), prom.ConstLabels(prometheus.Labels{"system": "test"}))
	defer c.Close()
	crasher := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(actor.ActorFunc(func(*actor.Context, any) { panic("x") }))
	}
	tmp, err := supervisor.Start(sys, supervisor.Spec{Name: "tmp", Children: []supervisor.ChildSpec{{ID: "t", Start: crasher, Restart: supervisor.Temporary}}})
	if err != nil {
		t.Fatal(err)
	}
	kids, _ := supervisor.WhichChildren(sys, tmp)
	sys.Send(kids[0].Pid, "go")
	poll(t, "the temporary child to go", func() bool { k, _ := supervisor.WhichChildren(sys, tmp); return len(k) == 0 })
	// Intensity 0: the first crash stops the supervisor.
	fragile, err := supervisor.Start(sys, supervisor.Spec{Name: "fragile", Intensity: 0, Period: time.Minute, Children: []supervisor.ChildSpec{{ID: "p", Start: crasher}}})
	if err != nil {
		t.Fatal(err)
	}
	fw, _ := sys.Monitor(fragile)
	kids, _ = supervisor.WhichChildren(sys, fragile)
	sys.Send(kids[0].Pid, "go")
	<-fw.Done()
	expected := `
# HELP colony_supervisor_restarts_total Child restarts by supervisor (its registered name), counted from its child_terminated reports since the collector was made; the restart that exceeded the intensity included.
# TYPE colony_supervisor_restarts_total counter
colony_supervisor_restarts_total{supervisor="fragile",system="test"} 1
# HELP colony_supervisor_shutdowns_total Supervisors that stopped because their restart intensity was exceeded, by name.
# TYPE colony_supervisor_shutdowns_total counter
colony_supervisor_shutdowns_total{supervisor="fragile",system="test"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(expected), "colony_supervisor_restarts_total", "colony_supervisor_shutdowns_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(c, "colony_mailbox_length"); n != 0 {
		t.Fatalf("mailbox histogram with scanning off: %d", n)
	}
}

// schedulerSeconds sums, per scheduler label, the values of a
// per-scheduler counter in one Gather.
func schedulerSeconds(t *testing.T, reg prometheus.Gatherer, name string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		if mf.GetType().String() != "COUNTER" {
			t.Fatalf("%s is a %v, want a counter", name, mf.GetType())
		}
		for _, m := range mf.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestBusySecondsCountFromTheFirstScrape: the busy-seconds counter is
// there, per scheduler, at the first scrape of a collector made over a
// System that has idled since Start; busy and parked seconds add up to at
// most the time since Start; a scripted handler that keeps its scheduler
// busy for 200 ms raises the sum by at least that; a second scraper does
// not change what the first sees (a counter, not a ratio since the last
// scrape); and no series ever goes back.
func TestBusySecondsCountFromTheFirstScrape(t *testing.T) {
	before := time.Now()
	sys, err := actor.Start(actor.Config{Schedulers: 2, Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
	}()
	// Idle schedulers park before anything observes them.
	poll(t, "the schedulers to park", func() bool {
		for _, s := range sys.Stats().Schedulers {
			if s.Parks == 0 {
				return false
			}
		}
		return true
	})
	c := prom.NewCollector(sys, prom.MinScanInterval(-1))
	defer c.Close()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	other := prometheus.NewPedanticRegistry() // a second scraper
	c2 := prom.NewCollector(sys, prom.MinScanInterval(-1))
	defer c2.Close()
	other.MustRegister(c2)

	busy0 := schedulerSeconds(t, reg, "colony_scheduler_busy_seconds_total")
	parked0 := schedulerSeconds(t, reg, "colony_scheduler_parked_seconds_total")
	if len(busy0) != 2 || len(parked0) != 2 {
		t.Fatalf("first scrape: busy %v, parked %v: want one series per scheduler", busy0, parked0)
	}
	up := time.Since(before).Seconds()
	var parkedSum float64
	for id, b := range busy0 {
		if b < 0 || b+parked0[id] > up+1e-3 {
			t.Fatalf("scheduler %s: busy %.4f s + parked %.4f s, but only %.4f s since Start", id, b, parked0[id], up)
		}
		parkedSum += parked0[id]
	}
	if parkedSum == 0 {
		t.Fatal("the first scrape counts no parked time for schedulers that parked before the collector was made")
	}

	// The scripted work: one handler busy for 200 ms, without blocking,
	// while the other scraper scrapes.
	const spin = 200 * time.Millisecond
	done := make(chan struct{})
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {
		for t0 := time.Now(); time.Since(t0) < spin; {
		}
		close(done)
	}))
	sys.Send(pid, "spin")
	for scraping := true; scraping; {
		select {
		case <-done:
			scraping = false
		default:
			if _, err := other.Gather(); err != nil {
				t.Fatal(err)
			}
		}
	}
	busy1 := schedulerSeconds(t, reg, "colony_scheduler_busy_seconds_total")
	var grew float64
	for id, b := range busy1 {
		if b < busy0[id] {
			t.Fatalf("scheduler %s: busy seconds went back from %v to %v", id, busy0[id], b)
		}
		grew += b - busy0[id]
	}
	if grew < spin.Seconds() {
		t.Fatalf("busy seconds grew by %.4f over a %v handler", grew, spin)
	}
	// Polled at once, the counters never go back.
	for i := 0; i < 200; i++ {
		b := schedulerSeconds(t, reg, "colony_scheduler_busy_seconds_total")
		p := schedulerSeconds(t, reg, "colony_scheduler_parked_seconds_total")
		for id := range b {
			if b[id] < busy1[id] || p[id] < parked0[id] {
				t.Fatalf("scheduler %s: a counter went back (busy %v -> %v, parked %v -> %v)", id, busy1[id], b[id], parked0[id], p[id])
			}
		}
		busy1, parked0 = b, p
	}
}

// TestTextExpositionMatchesTheCollector: package metrics's own text
// exposition (what cmd/actordemo serves at /metrics without
// client_golang) parses, with client_golang's parser, to what the
// collector exports over the same System: names, types, help, labels
// (a supervisor name and a const label that need escaping) and values.
func TestTextExpositionMatchesTheCollector(t *testing.T) {
	sys, err := actor.Start(actor.Config{Schedulers: 2, Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
	}()
	labels := map[string]string{"system": "a \"quoted\" \\ name"}
	c := prom.NewCollector(sys, prom.MinScanInterval(0), prom.ConstLabels(labels))
	defer c.Close()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	set := metrics.New(sys, metrics.MinScanInterval(0), metrics.ConstLabels(labels))
	defer set.Close()

	worker := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(actor.ActorFunc(func(c *actor.Context, msg any) { panic("scripted crash") }))
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{Name: "shop \"east\"\\1", Intensity: 10, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "worker", Start: worker}}})
	if err != nil {
		t.Fatal(err)
	}
	kids, _ := supervisor.WhichChildren(sys, sup)
	old := kids[0].Pid
	sys.Send(old, "crash")
	poll(t, "the restart", func() bool {
		k, _ := supervisor.WhichChildren(sys, sup)
		return len(k) == 1 && !k[0].Pid.IsZero() && k[0].Pid != old
	})
	sleeper, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) { c.Sleep(time.Hour) }))
	sys.Send(sleeper, "sleep")
	poll(t, "the sleeper to block", func() bool { i, _ := sys.Info(sleeper); return i.State == actor.StateBlocked })
	for i := 0; i < 40; i++ {
		sys.Send(sleeper, i)
	}
	poll(t, "the dead to be reclaimed", func() bool { return sys.Stats().Live == 3 })
	// Quiet now: nothing runs, so every figure but the seconds parked and
	// busy stays put between the two reads.
	poll(t, "the messages to be counted", func() bool { return sys.Stats().GlobalQueue == 0 })

	var text strings.Builder
	if err := set.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range set.Descs() {
		if !strings.HasSuffix(d.Name, "_seconds_total") {
			names = append(names, d.Name)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(text.String()), names...); err != nil {
		t.Fatalf("%v\n--- the text:\n%s", err, text.String())
	}
	for _, want := range []string{`colony_supervisor_restarts_total{supervisor="shop \"east\"\\1",system="a \"quoted\" \\ name"} 1`,
		`colony_mailbox_length_bucket{system="a \"quoted\" \\ name",le="100"} 3`,
		"# TYPE colony_scheduler_busy_seconds_total counter\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %s:\n%s", want, text.String())
		}
	}
}
