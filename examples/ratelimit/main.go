// Command ratelimit is an HTTP API in front of a per-client rate limiter and
// a work queue, built on Colony: plain net/http handlers call actors.
//
// supervisor.RunSystem runs a one_for_one tree, started in this order and
// stopped in reverse:
//
//   - limits: a typed gen_server registered as "ratelimit.limits" holding a
//     token bucket per API key, refilled by a StartTimer tick. Its state is
//     lost when it crashes: every key starts again with a full bucket.
//   - dispatcher: a gen_server registered as "ratelimit.dispatcher" with a
//     bounded queue. It tracks the worker group with MonitorGroup and hands
//     each job, with the HTTP handler's Request, to an idle worker, which
//     answers the handler itself. A job whose worker dies fails (500); it is
//     not retried, since it may have had effects.
//   - workers: a one_for_one supervisor of worker actors in a process group.
//   - http: a gen_server that owns the net/http server. Being last, it stops
//     first: its Terminate drains the requests in flight while the limiter
//     and the workers still run.
//
// A known limit: once Shutdown has begun, Spawn and SendAfter are refused,
// so a worker that crashes during the drain is not restarted and its pool
// gives up, failing the jobs still running (supervisor/newuser2_test.go).
//
// POST /v1/work?n=7&work=20ms&crash=1&timeout=1s (header X-API-Key) answers
// n*n after work: 429 when the key is out of tokens, 503 when the limiter or
// the queue cannot take it, 504 on a timeout, 500 when its worker crashed.
// GET /v1/stats; GET /healthz (503 while the limiter is down).
//
//	go run ./examples/ratelimit -addr 127.0.0.1:8080
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
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
	QueueLen       int           // jobs waiting for a worker; more is a 503
	LimiterTimeout time.Duration
	JobTimeout     time.Duration // the default and the longest per job
	DrainTimeout   time.Duration // for the requests in flight at shutdown
	OnListen       func(addr string)
}

var (
	errQueueFull = errors.New("queue full")
	errCanceled  = errors.New("job canceled")
)

// WorkerCrashed is the error of a job whose worker died running it.
type WorkerCrashed struct{ Reason actor.Reason }

func (e WorkerCrashed) Error() string { return fmt.Sprint("worker crashed: ", e.Reason) }

// limits is the limiter, a TypedServer: a take is answered with a verdict.
type (
	take    struct{ key string }
	verdict struct {
		OK         bool
		Remaining  int
		RetryAfter time.Duration
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

func (l *limits) HandleCall(c *actor.Context, q take, from actor.ReplyTo[verdict]) {
	left, ok := l.buckets[q.key]
	if !ok {
		left = l.burst
	}
	if left == 0 {
		wait, _ := c.ReadTimer(l.tick) // until the next refill
		from.Reply(c, verdict{RetryAfter: wait})
		return
	}
	l.buckets[q.key] = left - 1
	from.Reply(c, verdict{OK: true, Remaining: left - 1})
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
		// run on through the drain: no refill then.
		var err error
		if l.tick, err = c.StartTimer(c.Self(), refill{}, l.every); err != nil && !errors.Is(err, actor.ErrStopped) {
			c.Stop(err)
		}
	}
}

// The dispatcher and the workers.
type (
	Job struct {
		N     int
		Work  time.Duration
		Crash bool // after Work
	}
	Result struct{ Value, Worker string }
	submit struct {
		id  uint64 // the HTTP side's, so that it can cancel
		job Job
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
		Workers, Idle, Queued, Running int
		Done, Canceled, Crashed, Full  uint64
	}
)

type pending struct {
	req    actor.Request
	job    Job
	worker actor.Pid // zero while queued
}

type dispatcher struct {
	actor.ServerBase
	max     int
	workers map[actor.Pid]uint64 // a live member -> its job, 0: idle
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
	if _, err := c.Monitor(w); err == nil { // its Down fails its job
		d.workers[w] = 0
	}
}

func (d *dispatcher) HandleCall(c *actor.Context, req actor.Request) {
	switch m := req.Msg.(type) {
	case submit: // answered by the worker, or by us with an error
		if len(d.queue) >= d.max {
			d.stats.Full++
			c.ReplyError(req, errQueueFull)
			return
		}
		d.jobs[m.id] = &pending{req: req, job: m.job}
		d.queue = append(d.queue, m.id)
	case statsReq:
		s := d.stats
		s.Workers, s.Queued, s.Running = len(d.workers), len(d.queue), len(d.jobs)-len(d.queue)
		for _, id := range d.workers {
			if id == 0 {
				s.Idle++
			}
		}
		c.Reply(req, s)
	}
	d.dispatch(c)
}

func (d *dispatcher) HandleCast(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case cancelJob: // the HTTP caller gave up: end its call, drop its job
		if p := d.jobs[uint64(m)]; p != nil {
			delete(d.jobs, uint64(m))
			if i := slices.Index(d.queue, uint64(m)); i >= 0 {
				d.queue = append(d.queue[:i], d.queue[i+1:]...)
			} // else its worker runs on, and its answer will be late
			d.stats.Canceled++
			c.ReplyError(p.req, errCanceled) // false if the call timed out
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
		id := d.workers[m.Pid]
		delete(d.workers, m.Pid)
		if p := d.jobs[id]; p != nil { // not retried: at most once
			delete(d.jobs, id)
			d.stats.Crashed++
			c.ReplyError(p.req, WorkerCrashed{m.Reason})
		}
	}
	d.dispatch(c)
}

// dispatch hands queued jobs to idle workers.
func (d *dispatcher) dispatch(c *actor.Context) {
	for w, busy := range d.workers {
		if busy == 0 && len(d.queue) > 0 {
			id := d.queue[0]
			d.queue, d.workers[w], d.jobs[id].worker = d.queue[1:], id, w
			c.Send(w, run{id, d.jobs[id].job, d.jobs[id].req})
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
	if m, ok := msg.(run); ok {
		c.Sleep(m.job.Work) // the scheduler runs other actors meanwhile
		if m.job.Crash {
			panic(fmt.Sprintf("job %d: crash requested", m.id))
		}
		c.Reply(m.req, Result{fmt.Sprint(m.job.N * m.job.N), c.Self().String()})
		actor.CastName(c, dispatcherName, done{m.id, c.Self()})
	}
}

// spec is the service's supervision tree.
func spec(cfg Config) supervisor.Spec {
	pool := supervisor.Spec{Intensity: 100, Period: time.Second}
	for i := range cfg.Workers {
		pool.Children = append(pool.Children, supervisor.ChildSpec{ID: fmt.Sprint("worker", i),
			Start: func(c *actor.Context, _ ...any) (actor.Pid, error) { return c.SpawnLink(worker{}) }})
	}
	server := func(name string, s func() actor.Server) supervisor.StartFunc {
		return supervisor.ServerStart(func(...any) actor.Server { return s() },
			actor.WithSpawn(actor.Name(name), actor.MailboxBound(4096)))
	}
	return supervisor.Spec{Intensity: 10, Period: 10 * time.Second, Name: supName,
		Children: []supervisor.ChildSpec{
			{ID: "limits", Start: server(limitsName, func() actor.Server {
				return actor.Typed[take, verdict, any](&limits{burst: cfg.Burst, every: cfg.RefillEvery, buckets: map[string]int{}})
			})},
			{ID: "dispatcher", Start: server(dispatcherName, func() actor.Server {
				return &dispatcher{max: cfg.QueueLen, workers: map[actor.Pid]uint64{}, jobs: map[uint64]*pending{}}
			})},
			supervisor.Child("workers", pool),
			{ID: "http", Start: server(httpName, func() actor.Server { return &httpServer{cfg: cfg} }),
				Shutdown: cfg.DrainTimeout + time.Second},
		}}
}

// httpServer owns the net/http server: it listens in Init and drains in
// Terminate. Hold closes the server if the actor dies without Terminate (a
// kill), so that a restart can listen again and no goroutine is left.
type httpServer struct {
	actor.ServerBase
	cfg  Config
	srv  *http.Server
	stop chan struct{} // ends the limiter watch
	once sync.Once
	wg   sync.WaitGroup
}

type serveErr struct{ err error }

func (h *httpServer) Init(c *actor.Context) error {
	c.TrapExit(true) // so that the supervisor's shutdown runs Terminate
	ln, err := net.Listen("tcp", h.cfg.Addr)
	if err != nil {
		return err
	}
	sys, self := c.System(), c.Self()
	a := &api{sys: sys, cfg: h.cfg}
	h.srv, h.stop = &http.Server{Handler: a.routes()}, make(chan struct{})
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
	// Runs until SIGINT or SIGTERM; then the tree stops in reverse order,
	// http (draining) first.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := supervisor.RunSystem(ctx, sys, spec(cfg), cfg.DrainTimeout+5*time.Second); err != nil {
		log.Fatal(err)
	}
}
