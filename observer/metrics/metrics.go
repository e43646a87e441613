package metrics

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Kind is a metric family's type.
type Kind int

const (
	Counter Kind = iota
	Gauge
	Histogram
)

func (k Kind) String() string {
	switch k {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	case Histogram:
		return "histogram"
	}
	return "untyped"
}

// Desc describes one metric family. Immutable once made.
type Desc struct {
	Name   string // colony_...
	Help   string
	Kind   Kind
	Labels []string // the names of its variable labels, in Sample.LabelValues order
}

// Bucket is one bucket of a histogram sample: the observations at most
// UpperBound, cumulative. The +Inf bucket is not listed: it is the
// sample's Count.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// Sample is one series of a family: its label values (as Desc.Labels),
// and its value, or for a histogram its count, sum and buckets.
type Sample struct {
	LabelValues []string
	Value       float64
	Count       uint64
	Sum         float64
	Buckets     []Bucket
}

// Family is a Desc and its samples at one scrape.
type Family struct {
	Desc    *Desc
	Samples []Sample
}

// Option configures New.
type Option func(*Set)

// ConstLabels adds labels to every metric: to tell two Systems of one
// process apart. A name that is not a valid label name, or that a metric
// uses already (scheduler, supervisor, reason, le), panics in New.
func ConstLabels(l map[string]string) Option {
	return func(s *Set) { s.labels = maps.Clone(l) }
}

// MinScanInterval sets how stale the mailbox-length histogram may be: a
// scrape scans the actors only if the last scan is older (default 5 s).
// Zero scans at every scrape; a negative interval never scans, and the
// histogram is left out.
func MinScanInterval(d time.Duration) Option {
	return func(s *Set) { s.scanGap = d }
}

// Set is Colony's metrics over one System. Make it with New; it is safe
// for concurrent scrapes and may not be copied.
type Set struct {
	sys     *actor.System
	labels  map[string]string // immutable after New
	scanGap time.Duration     // immutable after New

	stopObserve, stopReports func()

	// mu guards the counts from reports; the report sink takes it, so it
	// is held only to copy or bump them.
	mu       sync.Mutex
	restarts map[string]uint64
	gaveUp   map[string]uint64
	crashes  uint64

	// scrapeMu guards the rest: the last mailbox scan (concurrent scrapes
	// share one) and the largest busy and parked times reported, which
	// keep those counters monotonic (actor.SchedulerObservation.Busy may
	// go back by one park between two reads).
	scrapeMu   sync.Mutex
	scanAt     time.Time
	mboxCnt    []uint64 // per mailboxBounds bucket, then the rest
	mboxSum    float64
	mboxN      uint64
	lastBusy   []time.Duration
	lastParked []time.Duration

	d descs
}

// mailboxBounds are the mailbox-length histogram's upper bounds: powers
// of ten, so a few long mailboxes among a million empty ones show.
var mailboxBounds = []float64{0, 1, 10, 100, 1000, 10000, 100000}

type descs struct {
	live, spawned, exited, restarts, gaveUp, crashes                  *Desc
	mailbox, handling, latency, handled                               *Desc
	busy, parked, runq, globalq, activations, steals, parks, handoffs *Desc
	resumes, retakes, timers, sockets, dead, orphaned, late           *Desc
	workers, spares                                                   *Desc
}

func (d *descs) all() []*Desc {
	return []*Desc{d.live, d.spawned, d.exited, d.restarts, d.gaveUp, d.crashes,
		d.mailbox, d.handling, d.latency, d.handled, d.busy, d.parked, d.runq, d.globalq, d.activations,
		d.steals, d.parks, d.handoffs, d.resumes, d.retakes, d.timers, d.sockets, d.dead, d.orphaned,
		d.late, d.workers, d.spares}
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// New returns the metrics of sys. It turns sys's sampling on and watches
// its reports until Close.
func New(sys *actor.System, opts ...Option) *Set {
	s := &Set{sys: sys, scanGap: 5 * time.Second, restarts: map[string]uint64{}, gaveUp: map[string]uint64{}}
	for _, o := range opts {
		o(s)
	}
	for name := range s.labels {
		if !labelName.MatchString(name) || strings.HasPrefix(name, "__") {
			panic(fmt.Sprintf("metrics: ConstLabels: %q is not a valid label name", name))
		}
		if slices.Contains([]string{"scheduler", "supervisor", "reason", "le"}, name) {
			panic(fmt.Sprintf("metrics: ConstLabels: %q is a label of Colony's own metrics", name))
		}
	}
	n := func(name string, kind Kind, help string, vars ...string) *Desc {
		return &Desc{Name: "colony_" + name, Help: help, Kind: kind, Labels: vars}
	}
	s.d = descs{
		live:        n("actors_live", Gauge, "Actor slots in use: live actors, and dead ones not yet reclaimed (a moment after their exit)."),
		spawned:     n("actors_spawned_total", Counter, "Actors spawned since the System started."),
		exited:      n("actors_exited_total", Counter, "Actors that exited since the System started, by class of exit reason.", "reason"),
		restarts:    n("supervisor_restarts_total", Counter, "Child restarts by supervisor (its registered name), counted from its child_terminated reports since the collector was made; the restart that exceeded the intensity included.", "supervisor"),
		gaveUp:      n("supervisor_shutdowns_total", Counter, "Supervisors that stopped because their restart intensity was exceeded, by name.", "supervisor"),
		crashes:     n("crash_reports_total", Counter, "Crash reports (a handler's panic, a Server stopped abnormally) since the collector was made."),
		mailbox:     n("mailbox_length", Histogram, "Mailbox lengths of the live actors, from the last scan of every actor (one observation per actor)."),
		handling:    n("message_handling_seconds", Histogram, "Time to handle one message: sampled activations (about 1 in 64), wall time over messages taken."),
		latency:     n("mailbox_latency_seconds", Histogram, "Time from a sampled Send (about 1 in 64) to the end of the activation that took the message."),
		handled:     n("messages_handled_total", Counter, "Messages taken from mailboxes by activations since the collector was made."),
		busy:        n("scheduler_busy_seconds_total", Counter, "Time since the System started that the scheduler was not parked idle (running activations, looking for work, or handed to a spare while a handler blocked); its rate is the scheduler's utilisation.", "scheduler"),
		parked:      n("scheduler_parked_seconds_total", Counter, "Time since the System started that the scheduler spent parked idle.", "scheduler"),
		runq:        n("scheduler_run_queue_length", Gauge, "Runnable actors in the scheduler's local queue and runnext slot.", "scheduler"),
		globalq:     n("global_run_queue_length", Gauge, "Runnable actors in the global run queue."),
		activations: n("scheduler_activations_total", Counter, "Activations (up to Budget messages each) run by the scheduler.", "scheduler"),
		steals:      n("scheduler_steals_total", Counter, "Successful steals from other schedulers' queues.", "scheduler"),
		parks:       n("scheduler_parks_total", Counter, "Times the scheduler parked idle.", "scheduler"),
		handoffs:    n("scheduler_handoffs_total", Counter, "Scheduler roles handed to a spare goroutine because a handler blocked.", "scheduler"),
		resumes:     n("scheduler_resumes_total", Counter, "Scheduler roles handed back to a blocked handler to resume it.", "scheduler"),
		retakes:     n("scheduler_watchdog_retakes_total", Counter, "Scheduler roles retired by the watchdog because a handler ran too long.", "scheduler"),
		timers:      n("timers_armed", Gauge, "Timers pending: SendAfter, waits' timeouts, intervals."),
		sockets:     n("sockets_open", Gauge, "Resources held by actors (System.Hold): io's sockets and listeners."),
		dead:        n("dead_letters_total", Counter, "Messages sent to dead actors, or left in a dead actor's mailbox."),
		orphaned:    n("orphaned_operations_total", Counter, "Operations by handlers of killed actors, dropped."),
		late:        n("late_replies_total", Counter, "Replies to calls that had already ended."),
		workers:     n("workers", Gauge, "Goroutines of the runtime: scheduler roles, spares, blocked handlers."),
		spares:      n("spare_workers", Gauge, "Idle goroutines kept for hand-offs."),
	}
	s.stopObserve = sys.Observe()
	s.stopReports = sys.WatchReports(s.report)
	return s
}

// Close stops the sampling and the report watching New started. Counters
// from reports keep their values; it is idempotent.
func (s *Set) Close() {
	s.stopObserve()
	s.stopReports()
}

// Descs returns every family's description (a family with no sample at a
// scrape is left out of Gather).
func (s *Set) Descs() []*Desc { return s.d.all() }

// Labels returns a copy of the ConstLabels.
func (s *Set) Labels() map[string]string { return maps.Clone(s.labels) }

// supLabel is a supervisor's label: its registered name, or "unnamed".
func supLabel(r actor.Report) string {
	if r.Name != "" {
		return r.Name
	}
	return "unnamed"
}

func (s *Set) report(r actor.Report) {
	switch r.Kind {
	case actor.CrashReport:
		s.mu.Lock()
		s.crashes++
		s.mu.Unlock()
	case actor.SupervisorReport:
		switch r.Context {
		case "child_terminated":
			if restartFollows(r.Extra) {
				s.mu.Lock()
				s.restarts[supLabel(r)]++
				s.mu.Unlock()
			}
		case "shutdown":
			s.mu.Lock()
			s.gaveUp[supLabel(r)]++
			s.mu.Unlock()
		}
	}
}

// restartFollows reads the supervisor's restart attribute
// (supervisor/supervisor.go, childExited); a report without one is taken
// as a restart.
func restartFollows(extra []slog.Attr) bool {
	for _, a := range extra {
		if a.Key == "restart" && a.Value.Kind() == slog.KindBool {
			return a.Value.Bool()
		}
	}
	return true
}

// Gather reads the counters: every family with at least one sample,
// sorted by name.
func (s *Set) Gather() []Family {
	d := &s.d
	st := s.sys.Stats()
	ob := s.sys.Observation()
	fams := map[*Desc]*Family{}
	add := func(desc *Desc, v float64, lv ...string) {
		f := fams[desc]
		if f == nil {
			f = &Family{Desc: desc}
			fams[desc] = f
		}
		f.Samples = append(f.Samples, Sample{LabelValues: lv, Value: v})
	}
	addHist := func(desc *Desc, smp Sample) {
		fams[desc] = &Family{Desc: desc, Samples: []Sample{smp}}
	}
	add(d.live, float64(st.Live))
	add(d.spawned, float64(st.Spawned))
	add(d.exited, float64(ob.Exits.Killed), "killed")
	add(d.exited, float64(ob.Exits.Normal), "normal")
	add(d.exited, float64(ob.Exits.Other), "other")
	add(d.exited, float64(ob.Exits.Panic), "panic")
	add(d.exited, float64(ob.Exits.Shutdown), "shutdown")
	add(d.handled, float64(ob.Handled))
	add(d.timers, float64(st.Timers))
	add(d.sockets, float64(ob.Held))
	add(d.dead, float64(st.Dropped))
	add(d.orphaned, float64(st.Orphaned))
	add(d.late, float64(st.LateReplies))
	add(d.workers, float64(st.Workers))
	add(d.spares, float64(st.SpareWorkers))
	add(d.globalq, float64(st.GlobalQueue))
	addHist(d.handling, durationHistogram(ob.Handling))
	addHist(d.latency, durationHistogram(ob.MailboxLatency))

	now := time.Now()
	s.mu.Lock()
	crashes, restarts, gaveUp := s.crashes, maps.Clone(s.restarts), maps.Clone(s.gaveUp)
	s.mu.Unlock()
	add(d.crashes, float64(crashes))
	for _, name := range slices.Sorted(maps.Keys(restarts)) {
		add(d.restarts, float64(restarts[name]), name)
	}
	for _, name := range slices.Sorted(maps.Keys(gaveUp)) {
		add(d.gaveUp, float64(gaveUp[name]), name)
	}

	s.scrapeMu.Lock()
	defer s.scrapeMu.Unlock()
	if n := len(ob.Schedulers); len(s.lastBusy) < n {
		s.lastBusy = append(s.lastBusy, make([]time.Duration, n-len(s.lastBusy))...)
		s.lastParked = append(s.lastParked, make([]time.Duration, n-len(s.lastParked))...)
	}
	for i, sc := range st.Schedulers {
		id := strconv.Itoa(sc.ID)
		add(d.activations, float64(sc.Activations), id)
		add(d.steals, float64(sc.Steals), id)
		add(d.parks, float64(sc.Parks), id)
		add(d.handoffs, float64(sc.Handoffs), id)
		add(d.resumes, float64(sc.Resumes), id)
		add(d.retakes, float64(sc.Retakes), id)
		add(d.runq, float64(sc.Queued), id)
		if i < len(ob.Schedulers) {
			// Keep the counters monotonic: a read may miss a park that
			// ended between its loads (actor/observe.go's design note).
			s.lastBusy[i] = max(s.lastBusy[i], ob.Schedulers[i].Busy)
			s.lastParked[i] = max(s.lastParked[i], ob.Schedulers[i].Parked)
			add(d.busy, s.lastBusy[i].Seconds(), id)
			add(d.parked, s.lastParked[i].Seconds(), id)
		}
	}
	if s.scanGap >= 0 {
		if s.mboxCnt == nil || now.Sub(s.scanAt) >= s.scanGap {
			s.scanMailboxesLocked(now)
		}
		smp := Sample{Count: s.mboxN, Sum: s.mboxSum}
		var acc uint64
		for i, b := range mailboxBounds {
			acc += s.mboxCnt[i]
			smp.Buckets = append(smp.Buckets, Bucket{UpperBound: b, Count: acc})
		}
		addHist(d.mailbox, smp)
	}
	out := make([]Family, 0, len(fams))
	for _, f := range fams {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Desc.Name < out[j].Desc.Name })
	return out
}

// scanMailboxesLocked scans every actor for the mailbox histogram.
// s.scrapeMu held (concurrent scrapes share one scan).
func (s *Set) scanMailboxesLocked(now time.Time) {
	cnt := make([]uint64, len(mailboxBounds)+1)
	var sum float64
	var n uint64
	s.sys.Scan(0, 0, func(st actor.ActorStat) bool {
		i := sort.SearchFloat64s(mailboxBounds, float64(st.MailboxLen))
		cnt[i]++
		sum += float64(st.MailboxLen)
		n++
		return true
	})
	s.mboxCnt, s.mboxSum, s.mboxN, s.scanAt = cnt, sum, n, now
}

// durationHistogram turns an actor.Histogram into a histogram sample in
// seconds (cumulative buckets).
func durationHistogram(h actor.Histogram) Sample {
	smp := Sample{Count: h.Count, Sum: h.Sum.Seconds()}
	var acc uint64
	for i, b := range h.Bounds {
		acc += h.Counts[i]
		smp.Buckets = append(smp.Buckets, Bucket{UpperBound: b.Seconds(), Count: acc})
	}
	return smp
}

// ContentType is the text exposition format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// ServeHTTP answers GET or HEAD with the metrics in the text exposition
// format.
func (s *Set) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "metrics take GET", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		return
	}
	s.WriteText(w)
}

// WriteText writes every family in Prometheus's text exposition format
// (version 0.0.4): HELP and TYPE lines, then one line a sample (a
// histogram's _bucket lines, +Inf last, then _sum and _count).
func (s *Set) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	consts := slices.Sorted(maps.Keys(s.labels))
	for _, f := range s.Gather() {
		d := f.Desc
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", d.Name, helpEscaper.Replace(d.Help), d.Name, d.Kind)
		for _, smp := range f.Samples {
			labels := func(extra ...string) string {
				var b strings.Builder
				sep := "{"
				pair := func(k, v string) {
					b.WriteString(sep + k + `="` + valueEscaper.Replace(v) + `"`)
					sep = ","
				}
				for i, name := range d.Labels {
					pair(name, smp.LabelValues[i])
				}
				for _, name := range consts {
					pair(name, s.labels[name])
				}
				for i := 0; i+1 < len(extra); i += 2 {
					pair(extra[i], extra[i+1])
				}
				if sep == "," {
					b.WriteString("}")
				}
				return b.String()
			}
			if d.Kind != Histogram {
				fmt.Fprintf(bw, "%s%s %s\n", d.Name, labels(), formatFloat(smp.Value))
				continue
			}
			for _, b := range smp.Buckets {
				fmt.Fprintf(bw, "%s_bucket%s %d\n", d.Name, labels("le", formatFloat(b.UpperBound)), b.Count)
			}
			fmt.Fprintf(bw, "%s_bucket%s %d\n", d.Name, labels("le", "+Inf"), smp.Count)
			fmt.Fprintf(bw, "%s_sum%s %s\n", d.Name, labels(), formatFloat(smp.Sum))
			fmt.Fprintf(bw, "%s_count%s %d\n", d.Name, labels(), smp.Count)
		}
	}
	return bw.Flush()
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// formatFloat writes v as the exposition format does.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
