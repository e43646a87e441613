package observer

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
)

//go:embed page/index.html
var page []byte

// actionHeader must be set (to anything) on the POST of an action.
const actionHeader = "X-Colony-Observer"

// MaxPageSize is the largest page of the process table an endpoint
// answers (limit=); more is a 400.
const MaxPageSize = 1000

// Option configures Handler.
type Option func(*config)

type config struct {
	actions  bool
	roots    []actor.Pid
	crashLog int
	interval time.Duration
	topN     int
	scanGap  time.Duration
	idle     time.Duration
	callWait time.Duration
}

// AllowActions enables the endpoints that change the system: killing an
// actor and sending it a message (a string). Without it they answer 403.
func AllowActions() Option { return func(c *config) { c.actions = true } }

// Supervisors names the roots of the supervision trees to show. The
// observer also learns every supervisor that writes a report, and the
// nested supervisors below a root; a tree whose root has written no
// report and is not named here is not shown.
func Supervisors(pids ...actor.Pid) Option {
	return func(c *config) { c.roots = append(c.roots, pids...) }
}

// CrashLog sets how many reports the crash log keeps (default 200).
func CrashLog(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.crashLog = n
		}
	}
}

// Interval sets how often the event stream sends a sample (default 1 s,
// at least 100 ms).
func Interval(d time.Duration) Option {
	return func(c *config) { c.interval = max(d, 100*time.Millisecond) }
}

// Handler returns the observer of sys: the page at its root and the JSON
// endpoints under api/ (docs/observability.md). Mount it under a prefix
// with http.StripPrefix; the page uses relative URLs. The handler watches
// sys's reports from now on, for the System's life.
func Handler(sys *actor.System, opts ...Option) http.Handler {
	cfg := config{
		crashLog: 200, interval: time.Second, topN: MaxPageSize,
		scanGap: time.Second, idle: time.Minute, callWait: 500 * time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg)
	}
	o := &observer{sys: sys, cfg: cfg, sups: map[actor.Pid]*supRecord{}, start: time.Now()}
	o.hub.o = o
	sys.WatchReports(o.report)
	return o
}

// observer is the Handler's state.
type observer struct {
	sys   *actor.System
	cfg   config
	start time.Time

	mu       sync.Mutex // guards the fields below; never held while calling into the System
	crashes  []crashEntry
	crashSeq uint64 // reports logged
	// crashTotal counts crash reports (not supervisor reports) seen
	crashTotal uint64
	sups       map[actor.Pid]*supRecord
	supOrder   []actor.Pid
	observe    func() // stops the System's sampling; nil while off
	lastUse    time.Time
	idleSet    bool

	scan scanner
	hub  hub
}

// crashEntry is one report in the crash log.
type crashEntry struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Context string    `json:"context"`
	Pid     string    `json:"pid"`
	Name    string    `json:"name,omitempty"`
	ChildID string    `json:"child_id,omitempty"`
	Reason  string    `json:"reason"`
	Text    string    `json:"text"`
	Stack   string    `json:"stack,omitempty"`
}

// supRecord is what the reports told of one supervisor.
type supRecord struct {
	restarts   uint64
	childExits uint64
	lastExit   map[string]exitNote // by child id
	gaveUp     bool
}

type exitNote struct {
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
	Pid    string    `json:"pid"`
}

const (
	maxReasonLen = 1000
	maxStackLen  = 16 << 10
)

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// report is the WatchReports sink: the crash log and the supervisors'
// records. It runs on whichever goroutine wrote the report and only
// takes o.mu.
func (o *observer) report(r actor.Report) {
	if r.Kind != actor.CrashReport && r.Kind != actor.SupervisorReport {
		return
	}
	now := time.Now()
	e := crashEntry{
		Time: now, Kind: r.Kind.String(), Context: r.Context, Pid: r.Pid.String(), Name: r.Name,
		ChildID: r.ChildID, Reason: cut(fmt.Sprint(r.Reason), maxReasonLen), Text: cut(r.Text, maxReasonLen),
		Stack: cut(r.Stack, maxStackLen),
	}
	o.mu.Lock()
	o.crashSeq++
	e.Seq = o.crashSeq
	if r.Kind == actor.CrashReport {
		o.crashTotal++
	}
	if len(o.crashes) >= o.cfg.crashLog {
		copy(o.crashes, o.crashes[1:])
		o.crashes = o.crashes[:len(o.crashes)-1]
	}
	o.crashes = append(o.crashes, e)
	if r.Kind == actor.SupervisorReport {
		s := o.supLocked(r.Pid)
		switch r.Context {
		case "child_terminated":
			s.childExits++
			if restartFollows(r.Extra) {
				s.restarts++
			}
			pid := ""
			if len(r.ChildPids) > 0 {
				pid = r.ChildPids[0].String()
			}
			s.lastExit[r.ChildID] = exitNote{Reason: e.Reason, Time: now, Pid: pid}
		case "shutdown":
			s.gaveUp = true
		}
	}
	o.mu.Unlock()
	o.hub.publish("crash", e)
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

// supLocked returns pid's record, making it. o.mu held.
func (o *observer) supLocked(pid actor.Pid) *supRecord {
	s := o.sups[pid]
	if s == nil {
		s = &supRecord{lastExit: map[string]exitNote{}}
		o.sups[pid] = s
		o.supOrder = append(o.supOrder, pid)
	}
	return s
}

// touch notes a request: the System's sampling and the labelling of
// blocked handlers (actor.System.ObserveStacks) are turned on, and off
// again after cfg.idle without one.
func (o *observer) touch() {
	o.mu.Lock()
	o.lastUse = time.Now()
	on := o.observe != nil
	o.mu.Unlock()
	if on {
		return
	}
	stopObserve, stopStacks := o.sys.Observe(), o.sys.ObserveStacks()
	stop := func() { stopObserve(); stopStacks() }
	o.mu.Lock()
	if o.observe != nil {
		o.mu.Unlock()
		stop() // another request turned it on meanwhile
		return
	}
	o.observe = stop
	arm := !o.idleSet
	o.idleSet = true
	o.mu.Unlock()
	if arm {
		time.AfterFunc(o.cfg.idle, o.idleCheck)
	}
}

// idleCheck turns sampling off if nothing used the observer for cfg.idle
// and no event stream is open; otherwise it looks again later.
func (o *observer) idleCheck() {
	o.mu.Lock()
	idle := time.Since(o.lastUse)
	if idle < o.cfg.idle || o.hub.clients() > 0 {
		o.mu.Unlock()
		time.AfterFunc(max(o.cfg.idle-idle, o.cfg.idle/4), o.idleCheck)
		return
	}
	stop := o.observe
	o.observe, o.idleSet = nil, false
	o.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// ServeHTTP routes the page and the API.
func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	if r.URL.Path == "" {
		// Mounted with StripPrefix("/x") and asked for "/x": the page's
		// relative URLs need the slash.
		// Location is relative to the request's own URL, which
		// http.Redirect would rewrite against the stripped path.
		w.Header().Set("Location", pathBase(r)+"/")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	type route struct {
		method string
		serve  func(http.ResponseWriter, *http.Request)
	}
	routes := map[string]route{
		"":             {http.MethodGet, o.servePage},
		"index.html":   {http.MethodGet, o.servePage},
		"api/overview": {http.MethodGet, o.serveOverview},
		"api/series":   {http.MethodGet, o.serveSeries},
		"api/events":   {http.MethodGet, o.serveEvents},
		"api/actors":   {http.MethodGet, o.serveActors},
		"api/actor":    {http.MethodGet, o.serveActor},
		"api/tree":     {http.MethodGet, o.serveTree},
		"api/crashes":  {http.MethodGet, o.serveCrashes},
		"api/kill":     {http.MethodPost, o.serveKill},
		"api/send":     {http.MethodPost, o.serveSend},
	}
	rt, ok := routes[path]
	if !ok {
		httpError(w, http.StatusNotFound, "no such endpoint: /"+path)
		return
	}
	if r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead) {
		w.Header().Set("Allow", rt.method)
		httpError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s takes %s, not %s", "/"+path, rt.method, r.Method))
		return
	}
	if rt.method == http.MethodPost && !o.cfg.actions {
		httpError(w, http.StatusForbidden, "actions are not enabled (observer.AllowActions)")
		return
	}
	if rt.method == http.MethodPost && r.Header.Get(actionHeader) == "" {
		// A cross-site form can POST here but cannot set a header: the
		// page's own requests carry it.
		httpError(w, http.StatusForbidden, "an action needs the "+actionHeader+" header (cross-site requests are refused)")
		return
	}
	if rt.method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 128<<10)
		if err := r.ParseForm(); err != nil {
			httpError(w, http.StatusBadRequest, "malformed form: "+err.Error())
			return
		}
	}
	if path != "" && path != "index.html" {
		o.touch() // (servePage touches for itself)
	}
	rt.serve(w, r)
}

// pathBase is the last element of the request's own path, for the
// redirect of a prefix asked without its slash.
func pathBase(r *http.Request) string {
	p := r.RequestURI
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	p = strings.TrimSuffix(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// bootMarker is where the page takes the figures it first renders: the
// JSON of api/series, embedded by servePage.
var bootMarker = []byte(`<script id="boot" type="application/json">null</script>`)

// servePage answers the page whatever its query: the query is the page's
// own state (tab, sort, rows, pid: a link to a view), read by its script,
// so a bookmark never meets a 400. It embeds the current series, the last
// sample measured over a window (hub.warm), so the first render shows
// real figures before the live stream opens.
func (o *observer) servePage(w http.ResponseWriter, r *http.Request) {
	o.touch() // the page is about to be used: sample its first window observed
	boot, err := json.Marshal(map[string]any{"interval_ms": o.cfg.interval.Milliseconds(), "samples": o.hub.warm()})
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	// json.Marshal escapes <, > and &, so the JSON cannot end the script.
	i := bytes.Index(page, bootMarker)
	if i < 0 {
		panic("observer: the embedded page has no boot marker")
	}
	head := bootMarker[:bytes.IndexByte(bootMarker, '>')+1]
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(page[:i])
	w.Write(head)
	w.Write(boot)
	w.Write([]byte("</script>"))
	w.Write(page[i+len(bootMarker):])
}

// httpError answers code with {"error": msg}.
func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}
