package main

// The HTTP side: plain Go (net/http handlers) calling the limiter by its
// registered name and the workers checked out of the pool, and mapping what
// comes back to HTTP statuses.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/pool"
)

// api serves the HTTP API.
type api struct {
	sys       *actor.System
	cfg       Config
	pool      *pool.Pool
	limiterUp atomic.Bool
	restarts  atomic.Int64 // limiter deaths seen by watchLimiter
	// Jobs ended, by how (GET /v1/stats).
	done, canceled, crashed, full atomic.Uint64
}

// Stats is GET /v1/stats: the pool's workers and jobs, and the jobs ended.
type Stats struct {
	Workers, Idle, Queued, Running int
	Done, Canceled, Crashed, Full  uint64
	LateReplies                    uint64 // results that came after their job's timeout
}

func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/work", a.work)
	mux.HandleFunc("GET /v1/stats", a.stats)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !a.limiterUp.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintf(w, "limiter up: %v; restarts: %d\n", a.limiterUp.Load(), a.restarts.Load())
	})
	return mux
}

func (a *api) work(w http.ResponseWriter, r *http.Request) {
	key, q := r.Header.Get("X-API-Key"), r.URL.Query()
	if key == "" {
		http.Error(w, "missing X-API-Key", http.StatusUnauthorized)
		return
	}
	job := Job{Crash: q.Get("crash") == "1"}
	job.N, _ = strconv.Atoi(q.Get("n"))
	job.Work, _ = time.ParseDuration(q.Get("work"))
	timeout := a.cfg.JobTimeout
	if t, err := time.ParseDuration(q.Get("timeout")); err == nil && t > 0 {
		timeout = min(t, timeout)
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()

	lctx, lcancel := context.WithTimeout(ctx, a.cfg.LimiterTimeout)
	v, err := actor.CallNameContext[verdict](lctx, a.sys, limitsName, take{key})
	lcancel()
	if err != nil {
		fail(w, "limiter", err)
		return
	}
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(v.Remaining))
	if !v.OK {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((v.RetryAfter+time.Second-1)/time.Second))))
		http.Error(w, "rate limited", http.StatusTooManyRequests)
		return
	}
	res, err := a.run(ctx, job)
	if err != nil {
		fail(w, "job", err)
		return
	}
	json.NewEncoder(w).Encode(res)
}

// run checks a worker out, waiting in the pool's queue until ctx ends, and
// calls it with job; then it releases the worker (see worker), however the
// call ended. A job whose worker died is a WorkerCrashed.
func (a *api) run(ctx context.Context, job Job) (Result, error) {
	w, err := a.pool.CheckoutContext(ctx, a.sys)
	if err == nil {
		var res Result
		res, err = actor.CallContext[Result](ctx, a.sys, w, job)
		a.sys.Send(w, release{})
		if err == nil {
			a.done.Add(1)
			return res, nil
		}
	}
	var exit *actor.CallExitError
	switch {
	case errors.As(err, &exit):
		a.crashed.Add(1)
		err = WorkerCrashed{exit.Reason}
	case errors.Is(err, pool.ErrQueueFull):
		a.full.Add(1)
		err = fmt.Errorf("queue full: %w", err)
	case ctx.Err() != nil: // timed out, or the client went away
		a.canceled.Add(1)
	}
	return Result{}, err
}

func (a *api) stats(w http.ResponseWriter, _ *http.Request) {
	st, err := a.pool.Status(a.sys)
	if err != nil {
		fail(w, "pool", err)
		return
	}
	json.NewEncoder(w).Encode(Stats{Workers: st.Idle + st.Busy, Idle: st.Idle, Queued: st.Waiting, Running: st.Busy,
		Done: a.done.Load(), Canceled: a.canceled.Load(), Crashed: a.crashed.Load(), Full: a.full.Load(),
		LateReplies: a.sys.Stats().LateReplies})
}

// watchLimiter keeps limiterUp with a monitor from outside (System.Monitor).
// There is no monitor of a name, nor a wait for one to be registered: it
// resolves the name, watches that pid, and polls while the name is free.
func (a *api) watchLimiter(stop <-chan struct{}) {
	for {
		var w *actor.Watch
		if pid, ok := a.sys.Whereis(limitsName); ok {
			w, _ = a.sys.Monitor(pid) // nil after Shutdown: ErrStopped
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

// fail maps an error from the actors to an HTTP status.
func fail(w http.ResponseWriter, what string, err error) {
	code := http.StatusInternalServerError // WorkerCrashed, ErrUnhandled, a bug
	switch {
	case errors.Is(err, context.DeadlineExceeded): // ErrTimeout is one too
		code = http.StatusGatewayTimeout
	case errors.Is(err, context.Canceled):
		code = 499 // the client closed the request (nginx's): nobody reads it
	case errors.Is(err, actor.ErrNoProc), // not registered or the pool not running (restarting), or died in the call
		errors.Is(err, actor.ErrMailboxFull), errors.Is(err, actor.ErrStopped), errors.Is(err, pool.ErrQueueFull):
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	http.Error(w, fmt.Sprintf("%s: %v", what, err), code)
}
