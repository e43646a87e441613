// Command ratelimit is an HTTP API in front of a per-client rate limiter and
// a work queue, built on Colony: plain net/http handlers call actors.
//
// supervisor.RunSystem runs a one_for_one tree, started in this order and
// stopped in reverse:
//
//   - limits: a typed gen_server registered as "ratelimit.limits" holding a
//     token bucket per API key, refilled by a StartTimer tick. Its state is
//     lost when it crashes: every key starts again with a full bucket.
//   - workers: a pool.Pool of worker actors. An HTTP handler checks a worker
//     out, waiting in the pool's FIFO while every worker is busy (at most
//     QueueLen wait: more is a 503), and calls it with its job. A job whose
//     worker dies fails (500); it is not retried, since it may have had
//     effects; the pool starts a new worker.
//   - http: a gen_server that owns the net/http server. Being last, it stops
//     first: its Terminate drains the requests in flight while the limiter
//     and the workers still run.
//
// A known limit: once Shutdown has begun, Spawn and SendAfter are refused,
// so a worker that crashes during the drain is not replaced: the pool logs
// it and runs on with one worker fewer.
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
	"sync"
	"syscall"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/pool"
	"github.com/colonyrt/colony/supervisor"
)

const (
	limitsName = "ratelimit.limits"
	httpName   = "ratelimit.http"
	supName    = "ratelimit.sup"
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

// The workers: each runs one job at a time for the HTTP handler that has
// it checked out of the pool.
type (
	Job struct {
		N     int
		Work  time.Duration
		Crash bool // after Work
	}
	Result  struct{ Value, Worker string }
	release struct{} // from the holder, after its call: check yourself in
)

// worker answers a job, a call from the HTTP handler that checked it out,
// after the job's Work. It goes back to the pool only when it handles
// release, which its holder sends once its call has ended however it ended:
// a release queues behind the job, so a worker whose caller gave up (a
// 504) stays checked out until its job is done, and one whose caller never
// sent the job (its ctx ended first) goes back at once.
type worker struct{ pool *pool.Pool }

func (w worker) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Request:
		job := m.Msg.(Job)
		c.Sleep(job.Work) // the scheduler runs other actors meanwhile
		if job.Crash {
			panic(fmt.Sprintf("job n=%d: crash requested", job.N))
		}
		c.Reply(m, Result{fmt.Sprint(job.N * job.N), c.Self().String()})
	case release:
		w.pool.Checkin(c, c.Self())
	}
}

// spec is the service's supervision tree, and the pool it runs.
func spec(cfg Config) (supervisor.Spec, *pool.Pool, error) {
	var workers *pool.Pool
	workers, err := pool.New(func(c *actor.Context) (actor.Pid, error) { return c.SpawnLink(worker{workers}) },
		pool.Size(cfg.Workers), pool.MaxWaiting(cfg.QueueLen))
	if err != nil {
		return supervisor.Spec{}, nil, err
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
			workers.ChildSpec("workers"),
			{ID: "http", Start: server(httpName, func() actor.Server { return &httpServer{cfg: cfg, pool: workers} }),
				Shutdown: cfg.DrainTimeout + time.Second},
		}}, workers, nil
}

// httpServer owns the net/http server: it listens in Init and drains in
// Terminate. Hold closes the server if the actor dies without Terminate (a
// kill), so that a restart can listen again and no goroutine is left.
type httpServer struct {
	actor.ServerBase
	cfg  Config
	pool *pool.Pool
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
	a := &api{sys: sys, cfg: h.cfg, pool: h.pool}
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
	tree, _, err := spec(cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := supervisor.RunSystem(ctx, sys, tree, cfg.DrainTimeout+5*time.Second); err != nil {
		log.Fatal(err)
	}
}
