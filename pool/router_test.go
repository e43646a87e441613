package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/pool"
)

// TestRouterRoundRobin: calls and casts go to each worker in turn, and
// the worker answers the caller itself.
func TestRouterRoundRobin(t *testing.T) {
	sys, _ := startSys(t)
	casts := make(chan actor.Pid, 16)
	r, err := pool.StartRouter(sys, startCasting(casts), pool.Size(3))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := r.Workers(sys)
	if err != nil || len(ws) != 3 {
		t.Fatalf("%v %v", ws, err)
	}
	for i := range 6 {
		got, err := pool.RouteCall[actor.Pid](sys, r, who{}, time.Second)
		if err != nil || got != ws[i%3] {
			t.Fatalf("call %d: %v %v, want %v", i, got, err, ws[i%3])
		}
	}
	for i := range 3 {
		r.Cast(sys, "hi")
		if got := recv(t, casts, "a cast"); got != ws[i%3] {
			t.Fatalf("cast %d went to %v, want %v", i, got, ws[i%3])
		}
	}
}

// TestRouterLeastLoaded: a worker that holds a routed call unanswered is
// passed over while another holds none; once it answers, it is routed to
// again.
func TestRouterLeastLoaded(t *testing.T) {
	sys, _ := startSys(t)
	r, err := pool.StartRouter(sys, startWorker, pool.Size(2), pool.LeastLoaded())
	if err != nil {
		t.Fatal(err)
	}
	kept := make(chan actor.Pid, 1)
	slow := make(chan actor.Pid, 1)
	go func() { w, _ := pool.RouteCall[actor.Pid](sys, r, keep{kept}, 10*time.Second); slow <- w }()
	busy := recv(t, kept, "the kept call")
	for range 5 {
		got, err := pool.RouteCall[actor.Pid](sys, r, who{}, time.Second)
		if err != nil || got == busy {
			t.Fatalf("routed to %v (%v); the loaded one is %v", got, err, busy)
		}
	}
	sys.Send(busy, release{})
	if w := recv(t, slow, "the kept call's answer"); w != busy {
		t.Fatalf("kept call answered by %v", w)
	}
	seen := map[actor.Pid]bool{}
	for range 4 {
		got, _ := pool.RouteCall[actor.Pid](sys, r, who{}, time.Second)
		seen[got] = true
	}
	if !seen[busy] || len(seen) != 2 {
		t.Fatalf("after the answer, routed to %v", seen)
	}
}

// TestRouterWorkerDies: calls routed to a worker that dies are answered
// with ErrWorkerDied; the worker is replaced.
func TestRouterWorkerDies(t *testing.T) {
	sys, _ := startSys(t)
	r, err := pool.StartRouter(sys, startWorker, pool.Size(1))
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := r.Workers(sys)
	res := make(chan error, 1)
	go func() { _, err := r.Call(sys, hold{time.Hour}, 10*time.Second); res <- err }()
	eventually(t, 5*time.Second, "the call routed", func() bool {
		info, err := sys.Info(ws[0])
		return err == nil && info.Handled > 0
	})
	sys.Exit(ws[0], actor.Kill)
	if err := recv(t, res, "the routed call"); !errors.Is(err, pool.ErrWorkerDied) {
		t.Fatalf("%v, want ErrWorkerDied", err)
	}
	eventually(t, 5*time.Second, "a replacement", func() bool {
		now, err := r.Workers(sys)
		return err == nil && len(now) == 1 && now[0] != ws[0]
	})
	if got, err := pool.RouteCall[actor.Pid](sys, r, who{}, time.Second); err != nil || got == ws[0] {
		t.Fatalf("after the replacement: %v %v", got, err)
	}
	if _, err := r.Call(sys, crash{}, time.Second); !errors.Is(err, pool.ErrWorkerDied) {
		t.Fatalf("a call that crashes its worker: %v", err)
	}
}

// TestRouterNoWorkers: while every worker's replacement fails to start,
// calls fail with ErrNoWorkers; Stop stops it and its handle.
func TestRouterNoWorkers(t *testing.T) {
	sys, _ := startSys(t)
	started := 0
	r, err := pool.StartRouter(sys, func(c *actor.Context) (actor.Pid, error) {
		if started++; started > 1 {
			return actor.Pid{}, errors.New("no more")
		}
		return startWorker(c)
	}, pool.Size(1))
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := r.Workers(sys)
	sys.Exit(ws[0], actor.Kill)
	eventually(t, 5*time.Second, "no workers", func() bool { now, _ := r.Workers(sys); return len(now) == 0 })
	if _, err := r.Call(sys, who{}, time.Second); !errors.Is(err, pool.ErrNoWorkers) {
		t.Fatalf("%v", err)
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Call(sys, who{}, time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("after Stop: %v", err)
	}
	if err := r.Cast(sys, "x"); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("cast after Stop: %v", err)
	}
}
