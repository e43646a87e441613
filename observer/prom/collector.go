// Package prom exports a Colony actor.System's own counters to Prometheus:
// a prometheus.Collector over Stats, Observation and the System's reports,
// following Prometheus naming (docs/observability.md lists every metric).
//
//	c := prom.NewCollector(sys)
//	defer c.Close()
//	prometheus.MustRegister(c)
//
// No metric has a per-pid label: actors come and go by the million.
// Supervisors are labelled by their registered name (Spec.Name), and
// schedulers by their index; both are few and stable.
//
// Cost. NewCollector turns on the System's sampling (actor.System.Observe:
// about one activation and one send in 64 timed) and watches its reports
// (one call per report). A scrape reads the counters, O(schedulers), and
// scans every actor for the mailbox-length histogram, O(actors), at most
// once per MinScanInterval (default 5 s; a million actors take tens of
// milliseconds). Close turns both off.
package prom

import (
	"log/slog"
	"maps"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/prometheus/client_golang/prometheus"
)

// Option configures NewCollector.
type Option func(*Collector)

// ConstLabels adds labels to every metric: to tell two Systems of one
// process apart.
func ConstLabels(l prometheus.Labels) Option {
	return func(c *Collector) { c.labels = l }
}

// MinScanInterval sets how stale the mailbox-length histogram may be: a
// scrape scans the actors only if the last scan is older (default 5 s).
// Zero scans at every scrape; a negative interval never scans, and the
// histogram is left out.
func MinScanInterval(d time.Duration) Option {
	return func(c *Collector) { c.scanGap = d }
}

// Collector is a prometheus.Collector over one System. Make it with
// NewCollector; it is safe for concurrent scrapes.
type Collector struct {
	sys     *actor.System
	labels  prometheus.Labels
	scanGap time.Duration

	stopObserve, stopReports func()

	// mu guards the counts from reports; the report sink takes it, so it
	// is held only to copy or bump them.
	mu       sync.Mutex
	restarts map[string]uint64
	gaveUp   map[string]uint64
	crashes  uint64

	// scrapeMu guards the rest: the last mailbox scan (concurrent scrapes
	// share one) and the previous scrape's parked times.
	scrapeMu sync.Mutex
	scanAt   time.Time
	mboxCnt  []uint64 // per mailboxBounds bucket, then the rest
	mboxSum  float64
	mboxN    uint64
	// utilisation since the previous scrape
	prevAt     time.Time
	prevParked []time.Duration

	d descs
}

// mailboxBounds are the mailbox-length histogram's upper bounds.
var mailboxBounds = []float64{0, 1, 10, 100, 1000, 10000, 100000}

type descs struct {
	live, spawned, exited, restarts, gaveUp, crashes                  *prometheus.Desc
	mailbox, handling, latency, handled                               *prometheus.Desc
	util, parked, runq, globalq, activations, steals, parks, handoffs *prometheus.Desc
	resumes, retakes, timers, sockets, dead, orphaned, late           *prometheus.Desc
	workers, spares                                                   *prometheus.Desc
}

// NewCollector returns a collector over sys. It turns sys's sampling on
// and watches its reports until Close.
func NewCollector(sys *actor.System, opts ...Option) *Collector {
	c := &Collector{sys: sys, scanGap: 5 * time.Second, restarts: map[string]uint64{}, gaveUp: map[string]uint64{}}
	for _, o := range opts {
		o(c)
	}
	n := func(name, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc("colony_"+name, help, vars, c.labels)
	}
	c.d = descs{
		live:        n("actors_live", "Actor slots in use: live actors, and dead ones not yet reclaimed (a moment after their exit)."),
		spawned:     n("actors_spawned_total", "Actors spawned since the System started."),
		exited:      n("actors_exited_total", "Actors that exited since the System started, by class of exit reason.", "reason"),
		restarts:    n("supervisor_restarts_total", "Child restarts by supervisor (its registered name), counted from its child_terminated reports since the collector was made; the restart that exceeded the intensity included.", "supervisor"),
		gaveUp:      n("supervisor_shutdowns_total", "Supervisors that stopped because their restart intensity was exceeded, by name.", "supervisor"),
		crashes:     n("crash_reports_total", "Crash reports (a handler's panic, a Server stopped abnormally) since the collector was made."),
		mailbox:     n("mailbox_length", "Mailbox lengths of the live actors, from the last scan of every actor (one observation per actor)."),
		handling:    n("message_handling_seconds", "Time to handle one message: sampled activations (about 1 in 64), wall time over messages taken."),
		latency:     n("mailbox_latency_seconds", "Time from a sampled Send (about 1 in 64) to the end of the activation that took the message."),
		handled:     n("messages_handled_total", "Messages taken from mailboxes by activations since the collector was made."),
		util:        n("scheduler_utilisation_ratio", "Fraction of the time since the previous scrape that the scheduler was not parked idle.", "scheduler"),
		parked:      n("scheduler_parked_seconds_total", "Time the scheduler spent parked idle since the collector was made.", "scheduler"),
		runq:        n("scheduler_run_queue_length", "Runnable actors in the scheduler's local queue and runnext slot.", "scheduler"),
		globalq:     n("global_run_queue_length", "Runnable actors in the global run queue."),
		activations: n("scheduler_activations_total", "Activations (up to Budget messages each) run by the scheduler.", "scheduler"),
		steals:      n("scheduler_steals_total", "Successful steals from other schedulers' queues.", "scheduler"),
		parks:       n("scheduler_parks_total", "Times the scheduler parked idle.", "scheduler"),
		handoffs:    n("scheduler_handoffs_total", "Scheduler roles handed to a spare goroutine because a handler blocked.", "scheduler"),
		resumes:     n("scheduler_resumes_total", "Scheduler roles handed back to a blocked handler to resume it.", "scheduler"),
		retakes:     n("scheduler_watchdog_retakes_total", "Scheduler roles retired by the watchdog because a handler ran too long.", "scheduler"),
		timers:      n("timers_armed", "Timers pending: SendAfter, waits' timeouts, intervals."),
		sockets:     n("sockets_open", "Resources held by actors (System.Hold): io's sockets and listeners."),
		dead:        n("dead_letters_total", "Messages sent to dead actors, or left in a dead actor's mailbox."),
		orphaned:    n("orphaned_operations_total", "Operations by handlers of killed actors, dropped."),
		late:        n("late_replies_total", "Replies to calls that had already ended."),
		workers:     n("workers", "Goroutines of the runtime: scheduler roles, spares, blocked handlers."),
		spares:      n("spare_workers", "Idle goroutines kept for hand-offs."),
	}
	c.stopObserve = sys.Observe()
	c.stopReports = sys.WatchReports(c.report)
	return c
}

// Close stops the sampling and the report watching NewCollector started.
// Counters from reports keep their values; it is idempotent.
func (c *Collector) Close() {
	c.stopObserve()
	c.stopReports()
}

// supLabel is a supervisor's label: its registered name, or "unnamed".
func supLabel(r actor.Report) string {
	if r.Name != "" {
		return r.Name
	}
	return "unnamed"
}

func (c *Collector) report(r actor.Report) {
	switch r.Kind {
	case actor.CrashReport:
		c.mu.Lock()
		c.crashes++
		c.mu.Unlock()
	case actor.SupervisorReport:
		switch r.Context {
		case "child_terminated":
			if restartFollows(r.Extra) {
				c.mu.Lock()
				c.restarts[supLabel(r)]++
				c.mu.Unlock()
			}
		case "shutdown":
			c.mu.Lock()
			c.gaveUp[supLabel(r)]++
			c.mu.Unlock()
		}
	}
}

func restartFollows(extra []slog.Attr) bool {
	for _, a := range extra {
		if a.Key == "restart" && a.Value.Kind() == slog.KindBool {
			return a.Value.Bool()
		}
	}
	return true
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	d := &c.d
	for _, x := range []*prometheus.Desc{d.live, d.spawned, d.exited, d.restarts, d.gaveUp, d.crashes,
		d.mailbox, d.handling, d.latency, d.handled, d.util, d.parked, d.runq, d.globalq, d.activations,
		d.steals, d.parks, d.handoffs, d.resumes, d.retakes, d.timers, d.sockets, d.dead, d.orphaned,
		d.late, d.workers, d.spares} {
		ch <- x
	}
}

// Collect reads the counters and sends the metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	d := &c.d
	st := c.sys.Stats()
	ob := c.sys.Observation()
	gauge := func(desc *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, lv...)
	}
	counter := func(desc *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, lv...)
	}
	gauge(d.live, float64(st.Live))
	counter(d.spawned, float64(st.Spawned))
	counter(d.exited, float64(ob.Exits.Normal), "normal")
	counter(d.exited, float64(ob.Exits.Shutdown), "shutdown")
	counter(d.exited, float64(ob.Exits.Killed), "killed")
	counter(d.exited, float64(ob.Exits.Panic), "panic")
	counter(d.exited, float64(ob.Exits.Other), "other")
	counter(d.handled, float64(ob.Handled))
	gauge(d.timers, float64(st.Timers))
	gauge(d.sockets, float64(ob.Held))
	counter(d.dead, float64(st.Dropped))
	counter(d.orphaned, float64(st.Orphaned))
	counter(d.late, float64(st.LateReplies))
	gauge(d.workers, float64(st.Workers))
	gauge(d.spares, float64(st.SpareWorkers))
	gauge(d.globalq, float64(st.GlobalQueue))
	ch <- durationHistogram(d.handling, ob.Handling)
	ch <- durationHistogram(d.latency, ob.MailboxLatency)

	now := time.Now()
	c.mu.Lock()
	crashes, restarts, gaveUp := c.crashes, maps.Clone(c.restarts), maps.Clone(c.gaveUp)
	c.mu.Unlock()
	counter(d.crashes, float64(crashes))
	for _, name := range sortedKeys(restarts) {
		counter(d.restarts, float64(restarts[name]), name)
	}
	for _, name := range sortedKeys(gaveUp) {
		counter(d.gaveUp, float64(gaveUp[name]), name)
	}
	c.scrapeMu.Lock()
	defer c.scrapeMu.Unlock()
	dt := now.Sub(c.prevAt).Seconds()
	parked := make([]time.Duration, len(ob.Schedulers))
	for i, s := range ob.Schedulers {
		parked[i] = s.Parked
	}
	for i, s := range st.Schedulers {
		id := strconv.Itoa(s.ID)
		counter(d.activations, float64(s.Activations), id)
		counter(d.steals, float64(s.Steals), id)
		counter(d.parks, float64(s.Parks), id)
		counter(d.handoffs, float64(s.Handoffs), id)
		counter(d.resumes, float64(s.Resumes), id)
		counter(d.retakes, float64(s.Retakes), id)
		gauge(d.runq, float64(s.Queued), id)
		if i < len(parked) {
			counter(d.parked, parked[i].Seconds(), id)
			if !c.prevAt.IsZero() && dt > 0 && i < len(c.prevParked) {
				u := 1 - (parked[i]-c.prevParked[i]).Seconds()/dt
				gauge(d.util, min(max(u, 0), 1), id)
			}
		}
	}
	c.prevAt, c.prevParked = now, parked
	if c.scanGap >= 0 {
		if c.mboxCnt == nil || now.Sub(c.scanAt) >= c.scanGap {
			c.scanMailboxesLocked(now)
		}
		buckets := make(map[float64]uint64, len(mailboxBounds))
		var acc uint64
		for i, b := range mailboxBounds {
			acc += c.mboxCnt[i]
			buckets[b] = acc
		}
		ch <- prometheus.MustNewConstHistogram(d.mailbox, c.mboxN, c.mboxSum, buckets)
	}
}

// scanMailboxesLocked scans every actor for the mailbox histogram.
// c.scrapeMu held (concurrent scrapes share one scan).
func (c *Collector) scanMailboxesLocked(now time.Time) {
	cnt := make([]uint64, len(mailboxBounds)+1)
	var sum float64
	var n uint64
	c.sys.Scan(0, 0, func(s actor.ActorStat) bool {
		i := sort.SearchFloat64s(mailboxBounds, float64(s.MailboxLen))
		cnt[i]++
		sum += float64(s.MailboxLen)
		n++
		return true
	})
	c.mboxCnt, c.mboxSum, c.mboxN, c.scanAt = cnt, sum, n, now
}

// durationHistogram turns an actor.Histogram into a Prometheus histogram
// in seconds (cumulative buckets).
func durationHistogram(desc *prometheus.Desc, h actor.Histogram) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Bounds))
	var acc uint64
	for i, b := range h.Bounds {
		acc += h.Counts[i]
		buckets[b.Seconds()] = acc
	}
	return prometheus.MustNewConstHistogram(desc, h.Count, h.Sum.Seconds(), buckets)
}

func sortedKeys(m map[string]uint64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
