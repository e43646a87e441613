package observer

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/colonyrt/colony/actor"
)

// allowParams fails if r's query has a parameter not in names, a repeated
// one, or does not parse.
func allowParams(r *http.Request, names ...string) error {
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return fmt.Errorf("malformed query: %v", err)
	}
	for k, v := range vals {
		if !slices.Contains(names, k) {
			if len(names) == 0 {
				return fmt.Errorf("unknown query parameter %q: this endpoint takes none", k)
			}
			return fmt.Errorf("unknown query parameter %q (this endpoint takes %s)", k, strings.Join(names, ", "))
		}
		if len(v) > 1 {
			return fmt.Errorf("query parameter %q given %d times", k, len(v))
		}
	}
	return nil
}

// intParam reads parameter name as an integer in [lo, hi], def if absent.
func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not an integer", name, s)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%s=%d is out of range [%d, %d]", name, n, lo, hi)
	}
	return n, nil
}

// pidParam reads the pid parameter: <node.index.generation> or
// node.index.generation.
func pidParam(r *http.Request) (actor.Pid, error) {
	s := r.URL.Query().Get("pid")
	if r.Method == http.MethodPost {
		s = r.PostFormValue("pid")
	}
	if s == "" {
		return actor.Pid{}, errors.New("pid is missing")
	}
	if !strings.HasPrefix(s, "<") {
		s = "<" + s + ">"
	}
	pid, err := actor.ParsePid(s)
	if err != nil || pid.IsZero() {
		return actor.Pid{}, fmt.Errorf("malformed pid %q (want <node.index.generation>)", s)
	}
	return pid, nil
}

// pidError answers for an error about a pid: 404 for one that names no
// live actor of this System.
func pidError(w http.ResponseWriter, pid actor.Pid, err error) {
	switch {
	case errors.Is(err, actor.ErrNoProc):
		httpError(w, http.StatusNotFound, "no such process: "+pid.String())
	case errors.Is(err, actor.ErrBadPid):
		httpError(w, http.StatusNotFound, "not a process of this node: "+pid.String())
	default:
		httpError(w, http.StatusInternalServerError, err.Error())
	}
}

// histSummary is a histogram's count and quantiles, in microseconds (each
// quantile is the upper bound of its bucket: at most a factor two high).
type histSummary struct {
	Count  uint64  `json:"count"`
	MeanUS float64 `json:"mean_us"`
	P50US  float64 `json:"p50_us"`
	P99US  float64 `json:"p99_us"`
}

func summarise(h actor.Histogram) histSummary {
	s := histSummary{Count: h.Count}
	if h.Count == 0 {
		return s
	}
	s.MeanUS = float64(h.Sum) / float64(h.Count) / 1e3
	s.P50US = quantile(h, 0.5)
	s.P99US = quantile(h, 0.99)
	return s
}

// quantile is the upper bound, in microseconds, of the bucket holding the
// q-quantile (the last bound for the overflow bucket).
func quantile(h actor.Histogram, q float64) float64 {
	want := uint64(q*float64(h.Count) + 0.5)
	var acc uint64
	for i, c := range h.Counts {
		acc += c
		if acc >= want && acc > 0 {
			if i < len(h.Bounds) {
				return float64(h.Bounds[i]) / 1e3
			}
			return float64(h.Bounds[len(h.Bounds)-1]) / 1e3
		}
	}
	return 0
}

// histDelta is h less an earlier snapshot of the same histogram.
func histDelta(h, was actor.Histogram) actor.Histogram {
	if was.Counts == nil {
		return h
	}
	d := actor.Histogram{Bounds: h.Bounds, Counts: make([]uint64, len(h.Counts)), Count: h.Count - was.Count, Sum: h.Sum - was.Sum}
	for i := range h.Counts {
		d.Counts[i] = h.Counts[i] - was.Counts[i]
	}
	return d
}

// schedRow is one scheduler in the overview.
type schedRow struct {
	ID          int     `json:"id"`
	Activations uint64  `json:"activations"`
	Parks       uint64  `json:"parks"`
	Steals      uint64  `json:"steals"`
	Handoffs    uint64  `json:"handoffs"`
	Resumes     uint64  `json:"resumes"`
	Retakes     uint64  `json:"retakes"`
	Queued      int     `json:"queued"`
	Utilisation float64 `json:"utilisation"` // since the previous sample, 0..1
}

// sample is the overview at one moment: the event stream's sample and a
// point of the dashboard's series.
type sample struct {
	T            int64            `json:"t"` // Unix milliseconds
	Uptime       float64          `json:"uptime_s"`
	Node         uint32           `json:"node"`
	Live         int              `json:"live"`
	Spawned      uint64           `json:"spawned"`
	Exits        actor.ExitCounts `json:"exits"`
	Exited       uint64           `json:"exited"`
	Dropped      uint64           `json:"dead_letters"`
	Orphaned     uint64           `json:"orphaned"`
	LateReplies  uint64           `json:"late_replies"`
	Timers       int              `json:"timers"`
	Workers      int              `json:"workers"`
	SpareWorkers int              `json:"spare_workers"`
	GlobalQueue  int              `json:"global_queue"`
	Held         int              `json:"sockets"`
	Handled      uint64           `json:"handled"`
	Activations  uint64           `json:"activations"`
	Crashes      uint64           `json:"crashes"`
	HeapBytes    uint64           `json:"heap_bytes"`
	TotalBytes   uint64           `json:"total_bytes"`
	Goroutines   uint64           `json:"goroutines"`
	Registered   int              `json:"registered"`
	Schedulers   []schedRow       `json:"schedulers"`
	Handling     histSummary      `json:"handling"`
	Latency      histSummary      `json:"latency"`
	// Rates per second since the previous sample.
	HandledRate    float64 `json:"handled_rate"`
	ActivationRate float64 `json:"activation_rate"`
	SpawnRate      float64 `json:"spawn_rate"`
	ExitRate       float64 `json:"exit_rate"`
	Actions        bool    `json:"actions"`

	// kept for the next sample's deltas
	at       time.Time
	parked   []time.Duration
	handling actor.Histogram
	latency  actor.Histogram
}

var memSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/sched/goroutines:goroutines"},
}

// takeSample reads the System's counters, with rates against prev (nil:
// none).
func (o *observer) takeSample(prev *sample) *sample {
	now := time.Now()
	st := o.sys.Stats()
	ob := o.sys.Observation()
	ms := slices.Clone(memSamples)
	metrics.Read(ms)
	s := &sample{
		T: now.UnixMilli(), Uptime: now.Sub(o.start).Seconds(), Node: o.sys.Node(), Live: st.Live, Spawned: st.Spawned,
		Exits: ob.Exits, Exited: ob.Exits.Total(), Dropped: st.Dropped, Orphaned: st.Orphaned, LateReplies: st.LateReplies,
		Timers: st.Timers, Workers: st.Workers, SpareWorkers: st.SpareWorkers, GlobalQueue: st.GlobalQueue,
		Held: ob.Held, Handled: ob.Handled, Registered: len(o.sys.Registered()), Actions: o.cfg.actions,
		at: now, handling: ob.Handling, latency: ob.MailboxLatency,
	}
	for _, m := range ms {
		if m.Value.Kind() != metrics.KindUint64 {
			continue
		}
		switch m.Name {
		case memSamples[0].Name:
			s.HeapBytes = m.Value.Uint64()
		case memSamples[1].Name:
			s.TotalBytes = m.Value.Uint64()
		case memSamples[2].Name:
			s.Goroutines = m.Value.Uint64()
		}
	}
	o.mu.Lock()
	s.Crashes = o.crashTotal
	o.mu.Unlock()
	var dt float64
	if prev != nil {
		dt = now.Sub(prev.at).Seconds()
	}
	for i, sc := range st.Schedulers {
		row := schedRow{ID: sc.ID, Activations: sc.Activations, Parks: sc.Parks, Steals: sc.Steals,
			Handoffs: sc.Handoffs, Resumes: sc.Resumes, Retakes: sc.Retakes, Queued: sc.Queued}
		s.Activations += sc.Activations
		var parked time.Duration
		if i < len(ob.Schedulers) {
			parked = ob.Schedulers[i].Parked
		}
		s.parked = append(s.parked, parked)
		if prev != nil && dt > 0 && i < len(prev.parked) {
			u := 1 - (parked-prev.parked[i]).Seconds()/dt
			row.Utilisation = min(max(u, 0), 1)
		}
		s.Schedulers = append(s.Schedulers, row)
	}
	if prev != nil && dt > 0 {
		rate := func(a, b uint64) float64 {
			if a < b {
				return 0
			}
			return float64(a-b) / dt
		}
		s.HandledRate = rate(s.Handled, prev.Handled)
		s.ActivationRate = rate(s.Activations, prev.Activations)
		s.SpawnRate = rate(s.Spawned, prev.Spawned)
		s.ExitRate = rate(s.Exited, prev.Exited)
		s.Handling = summarise(histDelta(ob.Handling, prev.handling))
		s.Latency = summarise(histDelta(ob.MailboxLatency, prev.latency))
	} else {
		s.Handling = summarise(ob.Handling)
		s.Latency = summarise(ob.MailboxLatency)
	}
	return s
}

func (o *observer) serveOverview(w http.ResponseWriter, r *http.Request) {
	if err := allowParams(r); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, o.hub.current())
}

func (o *observer) serveSeries(w http.ResponseWriter, r *http.Request) {
	if err := allowParams(r); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, map[string]any{"interval_ms": o.cfg.interval.Milliseconds(), "samples": o.hub.series()})
}

// actorRow is a row of the process table.
type actorRow struct {
	Pid     string `json:"pid"`
	Name    string `json:"name,omitempty"`
	State   string `json:"state"`
	Mailbox int    `json:"mailbox"`
	Handled uint64 `json:"handled"`
	Rate    uint64 `json:"rate"`
	Memory  int    `json:"memory"`
	Trap    bool   `json:"trap_exit,omitempty"`
}

func (o *observer) rowOf(r row) actorRow {
	a := actorRow{Pid: r.pid.String(), State: r.state, Mailbox: r.mailbox, Handled: r.handled, Rate: r.rate, Memory: r.memory, Trap: r.trap}
	if info, err := o.sys.Info(r.pid); err == nil {
		a.Name = info.Name
	}
	return a
}

// serveActors: the process table. With sort=KEY, the top of the last
// scan (offset+limit within cfg.topN); without, the whole table in slot
// order from cursor.
func (o *observer) serveActors(w http.ResponseWriter, r *http.Request) {
	if err := allowParams(r, "sort", "limit", "offset", "cursor"); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	q := r.URL.Query()
	limit, err := intParam(r, "limit", 50, 1, MaxPageSize)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	key := q.Get("sort")
	if key == "" {
		if q.Has("offset") {
			httpError(w, http.StatusBadRequest, "offset pages a sorted table: give sort, or page the whole table with cursor")
			return
		}
		cursor, err := intParam(r, "cursor", 0, 0, 1<<31)
		if err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		var rows []actorRow
		next := o.sys.Scan(cursor, limit, func(st actor.ActorStat) bool {
			rw := row{pid: st.Pid, state: st.State, mailbox: st.MailboxLen, handled: st.Handled, memory: st.Memory, trap: st.TrapExit}
			rw.rate = o.scan.rateSince(st)
			rows = append(rows, o.rowOf(rw))
			return true
		})
		writeJSON(w, map[string]any{"cursor": cursor, "next": next, "rows": nonNil(rows), "live": o.sys.Stats().Live})
		return
	}
	if !slices.Contains(sortKeys, key) {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("sort=%q: want one of %s", key, strings.Join(sortKeys, ", ")))
		return
	}
	if q.Has("cursor") {
		httpError(w, http.StatusBadRequest, "cursor pages the unsorted table: drop sort, or page with offset")
		return
	}
	offset, err := intParam(r, "offset", 0, 0, o.cfg.topN)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error()+" (a sorted table holds the top "+strconv.Itoa(o.cfg.topN)+")")
		return
	}
	s := o.snapshot()
	top := s.top[key]
	end := min(offset+limit, len(top))
	rows := []actorRow{}
	for i := min(offset, end); i < end; i++ {
		rows = append(rows, o.rowOf(top[i]))
	}
	writeJSON(w, map[string]any{
		"sort": key, "offset": offset, "rows": rows, "top": len(top), "total": s.total,
		"states": s.states, "mailbox_buckets": mailboxBuckets, "mailbox_counts": s.mailbox,
		"queued": s.queued, "window_ms": s.window.Milliseconds(), "scan_ms": float64(s.took.Microseconds()) / 1e3,
		"scanned_at": s.at.UnixMilli(),
	})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// serveActor: one actor's detail.
func (o *observer) serveActor(w http.ResponseWriter, r *http.Request) {
	if err := allowParams(r, "pid", "peek"); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	pid, err := pidParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	peek, err := intParam(r, "peek", 20, 0, 100)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	d, err := o.sys.Detail(pid)
	if err != nil {
		pidError(w, pid, err)
		return
	}
	links := make([]string, len(d.Links))
	for i, l := range d.Links {
		links[i] = l.String()
	}
	timers := make([]float64, len(d.Timers))
	for i, t := range d.Timers {
		timers[i] = float64(t.Microseconds()) / 1e3
	}
	out := map[string]any{
		"pid": pid.String(), "name": d.Name, "state": d.State, "mailbox": d.MailboxLen, "handled": d.Handled,
		"trap_exit": d.TrapExit, "links": links, "link_count": d.ActorInfo.Links, "monitored_by": d.Monitors,
		"monitoring": d.Watching, "group_monitors": d.GroupMonitors, "memory": d.Memory,
		"timers_ms": timers, "resources": nonNil(d.Resources),
	}
	if peek > 0 {
		msgs, err := o.sys.PeekMailbox(pid, peek, o.cfg.callWait)
		switch {
		case err == nil:
			out["mailbox_peek"] = nonNil(msgs)
		case errors.Is(err, actor.ErrTimeout):
			out["mailbox_peek_error"] = "the actor did not answer within " + o.cfg.callWait.String() + " (busy in a handler, or blocked)"
		default:
			out["mailbox_peek_error"] = err.Error()
		}
	}
	if d.State == actor.StateBlocked || d.State == actor.StateParked {
		if st, ok := o.sys.BlockedStack(pid); ok {
			out["stack"] = st
		}
	}
	writeJSON(w, out)
}

func (o *observer) serveCrashes(w http.ResponseWriter, r *http.Request) {
	if err := allowParams(r, "limit", "since"); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	limit, err := intParam(r, "limit", 100, 1, MaxPageSize)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	since, err := intParam(r, "since", 0, 0, 1<<62)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	o.mu.Lock()
	out := []crashEntry{}
	for i := len(o.crashes) - 1; i >= 0 && len(out) < limit; i-- {
		if o.crashes[i].Seq > uint64(since) {
			out = append(out, o.crashes[i])
		}
	}
	total, crashes := o.crashSeq, o.crashTotal
	o.mu.Unlock()
	writeJSON(w, map[string]any{"entries": out, "total": total, "crash_reports": crashes})
}

// serveKill: POST pid (and reason: an atom, default kill).
func (o *observer) serveKill(w http.ResponseWriter, r *http.Request) {
	pid, err := pidParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	reason := r.PostFormValue("reason")
	if reason == "" {
		reason = string(actor.Kill)
	}
	if len(reason) > 255 {
		httpError(w, http.StatusBadRequest, "reason is longer than 255 bytes")
		return
	}
	if !o.sys.Alive(pid) {
		pidError(w, pid, actor.ErrNoProc)
		return
	}
	if err := o.sys.Exit(pid, actor.Atom(reason)); err != nil {
		pidError(w, pid, err)
		return
	}
	writeJSON(w, map[string]any{"ok": true, "pid": pid.String(), "reason": reason})
}

// serveSend: POST pid and msg (sent as a string).
func (o *observer) serveSend(w http.ResponseWriter, r *http.Request) {
	pid, err := pidParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	msg := r.PostFormValue("msg")
	if len(msg) > 64<<10 {
		httpError(w, http.StatusBadRequest, "msg is longer than 64 KiB")
		return
	}
	if !o.sys.Alive(pid) {
		pidError(w, pid, actor.ErrNoProc)
		return
	}
	if err := o.sys.Send(pid, msg); err != nil {
		if errors.Is(err, actor.ErrMailboxFull) {
			httpError(w, http.StatusConflict, "mailbox full")
			return
		}
		pidError(w, pid, err)
		return
	}
	writeJSON(w, map[string]any{"ok": true, "pid": pid.String()})
}
