package main

// The HTTP side: plain Go (net/http handlers) calling the actors by their
// registered names, and mapping what comes back to HTTP statuses.

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
)

// api serves the HTTP API.
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

	v, err := callCtx[verdict](ctx, a.sys, limitsName, take{key}, a.cfg.LimiterTimeout, nil)
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
	id := a.ids.Add(1)
	res, err := callCtx[Result](ctx, a.sys, dispatcherName, submit{id, job}, timeout, func() {
		actor.CastName(a.sys, dispatcherName, cancelJob(id)) // nobody wants the job now
	})
	if err != nil {
		fail(w, "job", err)
		return
	}
	json.NewEncoder(w).Encode(res)
}

func (a *api) stats(w http.ResponseWriter, r *http.Request) {
	s, err := callCtx[Stats](r.Context(), a.sys, dispatcherName, statsReq{}, time.Second, nil)
	if err != nil {
		fail(w, "dispatcher", err)
		return
	}
	json.NewEncoder(w).Encode(struct {
		Stats
		LateReplies uint64
	}{s, a.sys.Stats().LateReplies})
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

// callCtx calls the actor registered under name, bounded by ctx and by
// timeout (actor.CallNameContext: a reply after either is dropped and
// counted late). A call that ended without its reply, by a timeout or a
// client that went away, calls onCancel, which tells the server that nobody
// waits for the work any more.
func callCtx[T any](ctx context.Context, sys *actor.System, name string, req any,
	timeout time.Duration, onCancel func()) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := actor.CallNameContext[T](ctx, sys, name, req)
	if err != nil && ctx.Err() != nil && onCancel != nil {
		onCancel()
	}
	return v, err
}

// fail maps an error from the actors to an HTTP status.
func fail(w http.ResponseWriter, what string, err error) {
	code := http.StatusInternalServerError // WorkerCrashed, ErrUnhandled, a bug
	switch {
	case errors.Is(err, context.DeadlineExceeded): // ErrTimeout is one too
		code = http.StatusGatewayTimeout
	case errors.Is(err, context.Canceled), errors.Is(err, errCanceled):
		code = 499 // the client closed the request (nginx's): nobody reads it
	case errors.Is(err, actor.ErrNoProc), // not registered (restarting), or died in the call
		errors.Is(err, actor.ErrMailboxFull), errors.Is(err, actor.ErrStopped), errors.Is(err, errQueueFull):
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	http.Error(w, fmt.Sprintf("%s: %v", what, err), code)
}
