// Command ratelimit is an HTTP API in front of a per-client rate limiter and
// a work queue, built on Colony: plain net/http handlers talk to actors.
//
// supervisor.RunSystem runs a one_for_one tree, started in this order and
// stopped in reverse:
//
//   - limits: a gen_server registered as "ratelimit.limits" holding a token
//     bucket per API key, refilled by a StartTimer tick. Its state is lost
//     when it crashes: every key starts again with a full bucket.
//   - dispatcher: a gen_server registered as "ratelimit.dispatcher" with a
//     bounded queue of jobs. It tracks the worker group with MonitorGroup
//     and hands each job, with the caller's Request, to an idle worker,
//     which replies to the HTTP handler itself. A worker that dies with a
//     job fails that job (it is not retried: it may have had effects).
//   - workers: a one_for_one supervisor of worker actors in a process group.
//   - http: a gen_server that owns the net/http server. It is last so that it
//     stops first: its Terminate drains the requests in flight while the
//     limiter and the workers still run.
//
// HTTP: POST /v1/work?n=7&work=20ms&timeout=1s (header X-API-Key) answers
// n*n after work; 429 when the key is out of tokens, 503 when the limiter or
// the queue cannot take it, 504 when it timed out, 500 when its worker
// crashed. GET /v1/stats, GET /healthz.
//
//	go run ./examples/ratelimit -addr 127.0.0.1:8080
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

const (
	limitsName     = "ratelimit.limits"
	dispatcherName = "ratelimit.dispatcher"
	httpName       = "ratelimit.http"
	supName        = "ratelimit.sup"
	workersGroup   = "ratelimit.workers"
)

// Config is the service's configuration; main fills it from flags.
type Config struct {
	Addr           string
	Workers        int
	Burst          int           // tokens per key
	RefillEvery    time.Duration // one token back per key per tick
	QueueLen       int           // jobs waiting for a worker; more is 503
	LimiterTimeout time.Duration
	JobTimeout     time.Duration // default and maximum per job
	DrainTimeout   time.Duration // in-flight requests at shutdown
	OnListen       func(addr string)
}

// Errors the actors answer with; httpStatus maps them.
var (
	errQueueFull = errors.New("queue full")
	errCanceled  = errors.New("job canceled")
	errExpired   = errors.New("job expired in the queue")
)

// WorkerCrashed is the error of a job whose worker died running it.
type WorkerCrashed struct{ Reason actor.Reason }

func (e WorkerCrashed) Error() string { return fmt.Sprint("worker crashed: ", e.Reason) }

// The limiter: take answers a verdict, peek too without taking.
type (
	take    struct{ key string }
	peek    struct{ key string }
	verdict struct {
		OK         bool          `json:"ok"`
		Remaining  int           `json:"remaining"`
		RetryAfter time.Duration `json:"retry_after"`
	}
	refill struct{}
)

type limits struct {
	actor.ServerBase
	burst   int
	every   time.Duration
	buckets map[string]int // tokens left; a key not here has a full bucket
	tick    actor.TimerRef
}

func (l *limits) Init(c *actor.Context) (err error) {
	l.tick, err = c.StartTimer(c.Self(), refill{}, l.every)
	return err
}

func (l *limits) HandleCall(c *actor.Context, req actor.Request) {
	var key string
	switch m := req.Msg.(type) {
	case take:
		key = m.key
	case peek:
		key = m.key
	default:
		l.ServerBase.HandleCall(c, req)
		return
	}
	left, ok := l.buckets[key]
	if !ok {
		left = l.burst
	}
	if left == 0 {
		wait, _ := c.ReadTimer(l.tick)
		c.Reply(req, verdict{RetryAfter: wait})
		return
	}
	if _, taking := req.Msg.(take); taking {
		left--
		l.buckets[key] = left
	}
	c.Reply(req, verdict{OK: true, Remaining: left})
}

func (l *limits) HandleInfo(c *actor.Context, msg any) {
	if t, ok := msg.(actor.Timeout); ok && t.Ref == l.tick {
		for k, left := range l.buckets {
			if left+1 >= l.burst {
				delete(l.buckets, k) // full: the same as absent
			} else {
				l.buckets[k] = left + 1
			}
		}
		// No periodic timer (timer:send_interval): re-arm each tick. Once
		// Shutdown has begun no timer can be armed (ErrStopped), though we
		// may run on for the whole drain: no refill then.
		var err error
		if l.tick, err = c.StartTimer(c.Self(), refill{}, l.every); err != nil && !errors.Is(err, actor.ErrStopped) {
			c.Stop(err)
		}
	}
}

// The dispatcher and its workers.
type (
	Job struct {
		N     int           `json:"n"`
		Work  time.Duration `json:"work"`
		Crash bool          `json:"crash"`
	}
	Result struct {
		Value  int    `json:"value"`
		Worker string `json:"worker"`
	}
	submit struct {
		id       uint64 // the HTTP side's, so that it can cancel
		job      Job
		deadline time.Time
	}
	cancelJob uint64
	done      struct {
		id     uint64
		worker actor.Pid
	}
	run struct {
		id  uint64
		job Job
		req actor.Request // the worker answers the HTTP handler's call
	}
	statsReq struct{}
	Stats    struct {
		Workers, Idle, Queued, Running         int
		Done, Canceled, Crashed, Expired, Full uint64
	}
)

type pending struct {
	submit
	req    actor.Request
	worker actor.Pid // zero while queued
}

type dispatcher struct {
	actor.ServerBase
	max     int
	workers map[actor.Pid]uint64 // member -> the job it runs, 0 idle
	mons    map[actor.Pid]actor.Ref
	jobs    map[uint64]*pending
	queue   []uint64
	stats   Stats
}

func (d *dispatcher) Init(c *actor.Context) error {
	_, members, err := c.MonitorGroup(workersGroup)
	for _, w := range members {
		d.join(c, w)
	}
	return err
}

func (d *dispatcher) join(c *actor.Context, w actor.Pid) {
	if ref, err := c.Monitor(w); err == nil {
		d.workers[w], d.mons[w] = 0, ref
	}
}

func (d *dispatcher) HandleCall(c *actor.Context, req actor.Request) {
	switch m := req.Msg.(type) {
	case submit:
		if len(d.queue) >= d.max {
			d.stats.Full++
			c.ReplyError(req, errQueueFull)
			return
		}
		d.jobs[m.id] = &pending{submit: m, req: req}
		d.queue = append(d.queue, m.id)
		d.dispatch(c)
	case statsReq:
		s := d.stats
		s.Workers, s.Queued, s.Running = len(d.workers), len(d.queue), len(d.jobs)-len(d.queue)
		for _, id := range d.workers {
			if id == 0 {
				s.Idle++
			}
		}
		c.Reply(req, s)
	default:
		d.ServerBase.HandleCall(c, req)
	}
}

func (d *dispatcher) HandleCast(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case cancelJob: // the HTTP caller gave up: end its call now
		if p := d.jobs[uint64(m)]; p != nil {
			delete(d.jobs, uint64(m))
			if p.worker.IsZero() {
				d.unqueue(uint64(m))
			} // else the worker runs on; its reply will be late
			d.stats.Canceled++
			c.ReplyError(p.req, errCanceled) // false if the call had timed out
		}
	case done:
		if d.workers[m.worker] == m.id {
			d.workers[m.worker] = 0
			if _, ok := d.jobs[m.id]; ok {
				delete(d.jobs, m.id)
				d.stats.Done++
			}
		}
	}
	d.dispatch(c)
}

func (d *dispatcher) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.GroupChange:
		if m.Joined {
			d.join(c, m.Pids[0])
		} // a leave is a death here: its Down follows
	case actor.Down:
		id, ok := d.workers[m.Pid]
		if !ok || d.mons[m.Pid] != m.Ref {
			break
		}
		delete(d.workers, m.Pid)
		delete(d.mons, m.Pid)
		if p := d.jobs[id]; p != nil { // not retried: at most once
			delete(d.jobs, id)
			d.stats.Crashed++
			c.ReplyError(p.req, WorkerCrashed{m.Reason})
		}
	}
	d.dispatch(c)
}

func (d *dispatcher) unqueue(id uint64) {
	for i, q := range d.queue {
		if q == id {
			d.queue = append(d.queue[:i], d.queue[i+1:]...)
			return
		}
	}
}

// dispatch hands queued jobs to idle workers, dropping expired ones.
func (d *dispatcher) dispatch(c *actor.Context) {
	for w, busy := range d.workers {
		for busy == 0 && len(d.queue) > 0 {
			p := d.jobs[d.queue[0]]
			d.queue = d.queue[1:]
			if time.Now().After(p.deadline) {
				delete(d.jobs, p.id)
				d.stats.Expired++
				c.ReplyError(p.req, errExpired) // late: the caller gave up
				continue
			}
			p.worker, busy = w, p.id
			d.workers[w] = p.id
			c.Send(w, run{p.id, p.job, p.req})
		}
	}
}

type worker struct{}

func (worker) Init(c *actor.Context) {
	if err := c.JoinGroup(workersGroup); err != nil {
		c.Stop(err)
	}
}

func (worker) Receive(c *actor.Context, msg any) {
	m, ok := msg.(run)
	if !ok {
		return
	}
	if m.job.Crash {
		panic(fmt.Sprintf("job %d: crash requested", m.id))
	}
	if m.job.Work > 0 {
		c.Sleep(m.job.Work) // the scheduler runs other actors meanwhile
	}
	c.Reply(m.req, Result{Value: m.job.N * m.job.N, Worker: c.Self().String()})
	actor.CastName(c, dispatcherName, done{m.id, c.Self()})
}

// spec is the service's supervision tree.
func spec(cfg Config) supervisor.Spec {
	pool := supervisor.Spec{Strategy: supervisor.OneForOne, Intensity: 100, Period: time.Second}
	for i := range cfg.Workers {
		pool.Children = append(pool.Children, supervisor.ChildSpec{ID: fmt.Sprint("worker", i),
			Start: func(c *actor.Context, _ ...any) (actor.Pid, error) { return c.SpawnLink(worker{}) }})
	}
	server := func(name string, s func() actor.Server) supervisor.StartFunc {
		return supervisor.ServerStart(func(...any) actor.Server { return s() },
			actor.WithSpawn(actor.Name(name), actor.MailboxBound(4096)))
	}
	return supervisor.Spec{
		Strategy: supervisor.OneForOne, Intensity: 10, Period: 10 * time.Second, Name: supName,
		Children: []supervisor.ChildSpec{
			{ID: "limits", Start: server(limitsName, func() actor.Server {
				return &limits{burst: cfg.Burst, every: cfg.RefillEvery, buckets: map[string]int{}}
			})},
			{ID: "dispatcher", Start: server(dispatcherName, func() actor.Server {
				return &dispatcher{max: cfg.QueueLen, workers: map[actor.Pid]uint64{},
					mons: map[actor.Pid]actor.Ref{}, jobs: map[uint64]*pending{}}
			})},
			supervisor.Child("workers", pool),
			{ID: "http", Start: server(httpName, func() actor.Server { return &httpServer{cfg: cfg} }),
				Shutdown: cfg.DrainTimeout + time.Second},
		},
	}
}

// httpServer owns the net/http server: it listens in Init and drains in
// Terminate. Hold closes the server if the actor dies without Terminate (a
// kill), so that a restart can listen again and no goroutine is left.
type httpServer struct {
	actor.ServerBase
	cfg  Config
	srv  *http.Server
	ln   net.Listener
	stop chan struct{} // ends the limiter watch
	once sync.Once
	wg   sync.WaitGroup
}

type (
	addrReq  struct{}
	serveErr struct{ err error }
)

func (h *httpServer) Init(c *actor.Context) error {
	c.TrapExit(true) // so that the supervisor's shutdown runs Terminate
	ln, err := net.Listen("tcp", h.cfg.Addr)
	if err != nil {
		return err
	}
	sys, self := c.System(), c.Self()
	a := &api{sys: sys, cfg: h.cfg}
	h.ln, h.srv, h.stop = ln, &http.Server{Handler: a.routes()}, make(chan struct{})
	if _, err := sys.Hold(self, closer(h.close)); err != nil {
		ln.Close()
		return err
	}
	h.wg.Add(2)
	go func() {
		defer h.wg.Done()
		if err := h.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			sys.Send(self, serveErr{err}) // HandleInfo stops us: a restart
		}
	}()
	go func() { defer h.wg.Done(); a.watchLimiter(h.stop) }()
	if h.cfg.OnListen != nil {
		h.cfg.OnListen(ln.Addr().String())
	}
	return nil
}

func (h *httpServer) close() error {
	h.once.Do(func() { close(h.stop) })
	return h.srv.Close()
}

func (h *httpServer) HandleCall(c *actor.Context, req actor.Request) {
	c.Reply(req, h.ln.Addr().String())
}

func (h *httpServer) HandleInfo(c *actor.Context, msg any) {
	if m, ok := msg.(serveErr); ok {
		c.Stop(m.err)
	}
}

// Terminate drains: Shutdown stops accepting and waits for the requests in
// flight, whose calls still reach the limiter and the workers (they stop
// after us). It blocks this handler, which the runtime allows.
func (h *httpServer) Terminate(c *actor.Context, _ actor.Reason) {
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.DrainTimeout)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil {
		c.System().Log("ratelimit: drain: %v", err)
	}
	h.close()
	h.wg.Wait()
}

type closer func() error

func (f closer) Close() error { return f() }

// api is the HTTP side: plain Go, calling the actors by registered name.
type api struct {
	sys       *actor.System
	cfg       Config
	ids       atomic.Uint64
	limiterUp atomic.Bool
	restarts  atomic.Int64 // limiter deaths seen by watchLimiter
}

func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/work", a.work)
	mux.HandleFunc("GET /v1/stats", a.stats)
	mux.HandleFunc("GET /healthz", a.health)
	return mux
}

func (a *api) work(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-API-Key")
	if key == "" {
		http.Error(w, "missing X-API-Key", http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	job := Job{Crash: q.Get("crash") == "1"}
	job.N, _ = strconv.Atoi(q.Get("n"))
	job.Work, _ = time.ParseDuration(q.Get("work"))
	timeout := a.cfg.JobTimeout
	if t, err := time.ParseDuration(q.Get("timeout")); err == nil && t > 0 {
		timeout = min(t, timeout)
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()

	v, err := callCtx[verdict](ctx, a.sys, limitsName, take{key}, a.cfg.LimiterTimeout, nil)
	if err != nil {
		fail(w, "limiter", err)
		return
	}
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(v.Remaining))
	if !v.OK {
		w.Header().Set("Retry-After", strconv.Itoa(int((v.RetryAfter+time.Second-1)/time.Second)))
		http.Error(w, "rate limited", http.StatusTooManyRequests)
		return
	}
	id := a.ids.Add(1)
	deadline, _ := ctx.Deadline()
	res, err := callCtx[Result](ctx, a.sys, dispatcherName, submit{id, job, deadline}, timeout, func() {
		actor.CastName(a.sys, dispatcherName, cancelJob(id)) // the job is not wanted any more
	})
	if err != nil {
		fail(w, "job", err)
		return
	}
	writeJSON(w, res)
}

func (a *api) stats(w http.ResponseWriter, r *http.Request) {
	s, err := callCtx[Stats](r.Context(), a.sys, dispatcherName, statsReq{}, time.Second, nil)
	if err != nil {
		fail(w, "dispatcher", err)
		return
	}
	writeJSON(w, map[string]any{"queue": s, "late_replies": a.sys.Stats().LateReplies,
		"limiter_up": a.limiterUp.Load(), "limiter_restarts": a.restarts.Load()})
}

func (a *api) health(w http.ResponseWriter, _ *http.Request) {
	if !a.limiterUp.Load() {
		http.Error(w, "limiter down", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// watchLimiter keeps limiterUp with a monitor from outside (System.Monitor):
// there is no monitor of a name, nor a wait for one to be registered, so it
// resolves the name, watches that pid, and polls while the name is free.
func (a *api) watchLimiter(stop <-chan struct{}) {
	for {
		pid, ok := a.sys.Whereis(limitsName)
		var w *actor.Watch
		if ok {
			w, _ = a.sys.Monitor(pid) // ErrStopped: the System is going
		}
		a.limiterUp.Store(w != nil)
		if w == nil {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				continue
			}
		}
		select {
		case <-stop:
			w.Stop()
			return
		case <-w.Done():
			a.restarts.Add(1)
		}
	}
}

// callCtx is actor.CallName bounded by ctx as well as by timeout: the call
// takes only a duration, so ctx's deadline becomes its timeout, and ctx's
// cancellation (the client went away) ends the wait through onCancel, which
// must make the callee answer (a blocked call cannot be interrupted); then
// the call's goroutine is waited for. A nil onCancel waits for the call.
func callCtx[T any](ctx context.Context, sys *actor.System, name string, req any,
	timeout time.Duration, onCancel func()) (T, error) {
	var zero T
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	if timeout <= 0 || ctx.Err() != nil { // a negative timeout is ErrNegativeTimeout
		return zero, context.Cause(ctx)
	}
	if onCancel == nil {
		return actor.CallName[T](sys, name, req, timeout)
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := actor.CallName[T](sys, name, req, timeout)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		if errors.Is(r.err, actor.ErrTimeout) {
			onCancel() // a timed-out call leaves its request with the server
		}
		return r.v, r.err
	case <-ctx.Done():
		onCancel()
		r := <-ch
		if r.err == nil {
			return r.v, nil // answered before the cancel
		}
		return zero, errors.Join(context.Cause(ctx), r.err)
	}
}

// fail maps an actor-side error to an HTTP status.
func fail(w http.ResponseWriter, what string, err error) {
	code := http.StatusInternalServerError
	var crashed WorkerCrashed
	switch {
	case errors.Is(err, actor.ErrTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, errExpired):
		code = http.StatusGatewayTimeout
	case errors.Is(err, context.Canceled), errors.Is(err, errCanceled):
		code = 499 // the client closed the request (nginx): nobody reads it
	case errors.Is(err, actor.ErrNoProc), // not registered (restarting), or died in the call
		errors.Is(err, actor.ErrMailboxFull), errors.Is(err, actor.ErrStopped),
		errors.Is(err, errQueueFull):
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	case errors.As(err, &crashed):
	}
	http.Error(w, fmt.Sprintf("%s: %v", what, err), code)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func main() {
	cfg := Config{QueueLen: 64, LimiterTimeout: 100 * time.Millisecond}
	flag.StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "listen address")
	flag.IntVar(&cfg.Workers, "workers", 4, "worker actors")
	flag.IntVar(&cfg.Burst, "burst", 10, "requests per key in a burst")
	flag.DurationVar(&cfg.RefillEvery, "refill", 100*time.Millisecond, "one token back per key this often")
	flag.DurationVar(&cfg.JobTimeout, "timeout", 5*time.Second, "the longest a job may take")
	flag.DurationVar(&cfg.DrainTimeout, "drain", 10*time.Second, "time given to requests in flight at shutdown")
	flag.Parse()
	cfg.OnListen = func(addr string) { log.Printf("ratelimit: listening on http://%s", addr) }
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		log.Fatal(err)
	}
	// Until SIGINT or SIGTERM: then the tree stops in reverse order, http
	// (draining) first.
	if err := supervisor.RunSystem(context.Background(), sys, spec(cfg), cfg.DrainTimeout+5*time.Second); err != nil {
		log.Fatal(err)
	}
}
