// Proto.Actor Go (github.com/asynkron/protoactor-go): the same workloads, written as its users
// would write them.
//
// Design note.
//
// Idiomatic Proto.Actor: Props from a producer, root.Send from outside, ctx.Request/ctx.Respond
// between actors, RequestFuture for a call, the scheduler package's TimerScheduler (time.AfterFunc
// underneath) for timers, ctx.Stop(ctx.Self()) for an actor that is done. Default mailbox and
// dispatcher (throughput 300). One ActorSystem per sample, created before the clock starts; its
// logger is discarded so dead-letter and lifecycle logging cost nothing and print nothing.
//
// Completion is reported to the harness through Go channels and WaitGroups, as the goroutine
// implementation does. Actors stop themselves and the sample waits for their *actor.Stopped
// (outside the timed section where the workload does not include exiting), so nothing leaks into
// the next sample.
package main

import (
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"
)

func init() {
	register("protoactor", map[string]RunFunc{
		"pingpong":   paPingPong,
		"threadring": paThreadRing,
		"counting":   paCounting,
		"forkjoin":   paForkJoin,
		"fanout":     paForkJoin,
		"spawn":      paSpawn,
		"skynet":     paSkynet,
		"memory":     paMemory,
		"timers":     paTimers,
		"armcancel":  paArmCancel,
		"callrt":     paCallRT,
		"callext":    paCallExt,
	})
}

func paSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
}

// ---- pingpong

type (
	paPing  int64
	paPong  int64
	paStart struct{}
)

type paPinger struct {
	pong *actor.PID
	i, n int64
	sum  int64
	done chan int64
}

func (a *paPinger) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case paStart:
		ctx.Request(a.pong, paPing(0))
	case paPong:
		a.sum += int64(m)
		if a.i++; a.i == a.n {
			a.done <- a.sum
			return
		}
		ctx.Request(a.pong, paPing(a.i))
	}
}

func paPingPong(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	done := make(chan int64, 1)
	start := time.Now()
	pong := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if m, ok := ctx.Message().(paPing); ok {
			ctx.Respond(paPong(m))
		}
	}))
	ping := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
		return &paPinger{pong: pong, n: int64(p.N), done: done}
	}))
	sys.Root.Send(ping, paStart{})
	sum := <-done
	wall := time.Since(start)
	paStopAll(sys, ping, pong)
	return Sample{Wall: wall, Check: sum}, nil
}

// paStopAll stops the given actors and waits until they are gone.
func paStopAll(sys *actor.ActorSystem, pids ...*actor.PID) {
	for _, pid := range pids {
		_ = sys.Root.StopFuture(pid).Wait()
	}
}

// ---- threadring

type (
	paNext  struct{ pid *actor.PID }
	paToken int
)

type paRinger struct {
	i        int
	next     *actor.PID
	reported bool
	result   chan int
	stopped  *sync.WaitGroup
}

func (a *paRinger) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case paNext:
		a.next = m.pid
	case paToken:
		switch {
		case m > 0:
			ctx.Send(a.next, m-1)
		case m == 0: // this actor ends the ring: report, then send the stop token around
			a.reported = true
			a.result <- a.i
			ctx.Send(a.next, paToken(-1))
		default: // stop token: pass it on (unless it came back to the reporter) and stop
			if !a.reported {
				ctx.Send(a.next, m)
			}
			ctx.Stop(ctx.Self())
		}
	case *actor.Stopped:
		a.stopped.Done()
	}
}

func paThreadRing(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	result := make(chan int, 1)
	var stopped sync.WaitGroup
	start := time.Now()
	pids := make([]*actor.PID, p.Actors)
	stopped.Add(p.Actors)
	for i := range pids {
		pids[i] = sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
			return &paRinger{i: i, result: result, stopped: &stopped}
		}))
	}
	for i, pid := range pids {
		sys.Root.Send(pid, paNext{pids[(i+1)%len(pids)]})
	}
	sys.Root.Send(pids[0], paToken(p.N))
	idx := <-result
	wall := time.Since(start)
	stopped.Wait()
	return Sample{Wall: wall, Check: int64(idx)}, nil
}

// ---- counting

type (
	paAdd int64
	paGet struct{}
)

type paCounter struct{ total int64 }

func (a *paCounter) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case paAdd:
		a.total += int64(m)
	case paGet:
		ctx.Respond(a.total)
	}
}

func paCounting(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	start := time.Now()
	c := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &paCounter{} }))
	for i := 1; i <= p.N; i++ {
		sys.Root.Send(c, paAdd(i))
	}
	res, err := sys.Root.RequestFuture(c, paGet{}, time.Minute).Result()
	if err != nil {
		return Sample{}, err
	}
	wall := time.Since(start)
	paStopAll(sys, c)
	return Sample{Wall: wall, Check: res.(int64)}, nil
}

// ---- forkjoin

type paWork int64

type paWorker struct {
	n, m      int
	processed *atomic.Int64
	wg        *sync.WaitGroup
}

func (a *paWorker) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(paWork); ok {
		if a.n++; a.n == a.m {
			a.processed.Add(int64(a.n))
			a.wg.Done()
		}
	}
}

func paForkJoin(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	var wg sync.WaitGroup
	var processed atomic.Int64
	start := time.Now()
	props := actor.PropsFromProducer(func() actor.Actor {
		return &paWorker{m: p.N, processed: &processed, wg: &wg}
	})
	pids := make([]*actor.PID, p.Actors)
	wg.Add(p.Actors)
	for i := range pids {
		pids[i] = sys.Root.Spawn(props)
	}
	for m := 0; m < p.N; m++ {
		for _, pid := range pids {
			sys.Root.Send(pid, paWork(m))
		}
	}
	wg.Wait()
	wall := time.Since(start)
	paStopAll(sys, pids...)
	return Sample{Wall: wall, Check: processed.Load()}, nil
}

// ---- spawn

type paValue int64

func paSpawn(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	var wg sync.WaitGroup
	var sum atomic.Int64
	props := actor.PropsFromFunc(func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case paValue:
			sum.Add(int64(m))
			ctx.Stop(ctx.Self())
		case *actor.Stopped: // the actor has exited: that is what the workload waits for
			wg.Done()
		}
	})
	start := time.Now()
	wg.Add(p.N)
	for i := 0; i < p.N; i++ {
		sys.Root.Send(sys.Root.Spawn(props), paValue(i))
	}
	wg.Wait()
	return Sample{Wall: time.Since(start), Check: sum.Load()}, nil
}

// ---- skynet

type (
	paSkyStart  struct{ num, size int64 }
	paSkyResult int64
)

type paSky struct {
	props   *actor.Props
	done    chan int64 // root only
	sum     int64
	replies int
	stopped *sync.WaitGroup
}

func (a *paSky) reply(ctx actor.Context, v int64) {
	if a.done != nil {
		a.done <- v
	} else {
		ctx.Send(ctx.Parent(), paSkyResult(v))
	}
	ctx.Stop(ctx.Self())
}

func (a *paSky) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case paSkyStart:
		if m.size == 1 {
			a.reply(ctx, m.num)
			return
		}
		child := m.size / 10
		a.stopped.Add(10)
		for i := int64(0); i < 10; i++ {
			ctx.Send(ctx.Spawn(a.props), paSkyStart{num: m.num + i*child, size: child})
		}
	case paSkyResult:
		a.sum += int64(m)
		if a.replies++; a.replies == 10 {
			a.reply(ctx, a.sum)
		}
	case *actor.Stopped:
		a.stopped.Done()
	}
}

func paSkynet(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	var stopped sync.WaitGroup
	done := make(chan int64, 1)
	var props *actor.Props
	props = actor.PropsFromProducer(func() actor.Actor { return &paSky{props: props, stopped: &stopped} })
	rootProps := actor.PropsFromProducer(func() actor.Actor {
		return &paSky{props: props, done: done, stopped: &stopped}
	})
	start := time.Now()
	stopped.Add(1)
	sys.Root.Send(sys.Root.Spawn(rootProps), paSkyStart{num: 0, size: pow10(p.Depth)})
	sum := <-done
	wall := time.Since(start)
	stopped.Wait()
	return Sample{Wall: wall, Check: sum}, nil
}

// ---- memory

type paPoke struct{}

func paMemory(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	pids := make([]*actor.PID, p.N) // harness-owned: allocated before the baseline
	var started, acked sync.WaitGroup
	var count atomic.Int64
	props := actor.PropsFromFunc(func(ctx actor.Context) {
		switch ctx.Message().(type) {
		case *actor.Started:
			started.Done()
		case paPoke:
			count.Add(1)
			acked.Done()
		}
	})
	base := memBaseline()
	start := time.Now()
	started.Add(p.N)
	acked.Add(p.N)
	for i := range pids {
		pids[i] = sys.Root.Spawn(props)
	}
	started.Wait()
	wall := time.Since(start)
	waitQuiet()
	bytes := memDelta(base)
	for _, pid := range pids {
		sys.Root.Send(pid, paPoke{})
	}
	acked.Wait()
	return Sample{Wall: wall, Check: count.Load(), Extra: map[string]float64{
		"bytes_per_actor": float64(bytes) / float64(p.N),
	}}, nil
}

// ---- timers

type paFire struct{}

type paTimer struct {
	i        int
	delay    time.Duration
	deadline time.Time
	late     []int64
	fired    *atomic.Int64
	wg       *sync.WaitGroup
}

func (a *paTimer) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		a.deadline = time.Now().Add(a.delay)
		scheduler.NewTimerScheduler(ctx).SendOnce(a.delay, ctx.Self(), paFire{})
	case paFire:
		a.late[a.i] = int64(time.Since(a.deadline))
		a.fired.Add(1)
		ctx.Stop(ctx.Self())
	case *actor.Stopped:
		a.wg.Done()
	}
}

func paTimers(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	delays := timerDelays(p)
	late := make([]int64, p.N)
	var wg sync.WaitGroup
	var fired atomic.Int64
	start := time.Now()
	wg.Add(p.N)
	for i, d := range delays {
		sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
			return &paTimer{i: i, delay: d, late: late, fired: &fired, wg: &wg}
		}))
	}
	wg.Wait()
	return Sample{Wall: time.Since(start), Check: fired.Load(), Extra: lateStats(late)}, nil
}

// ---- armcancel: TimerScheduler.SendOnce and its CancelFunc (which reports nothing, so every
// cancel counts).

func paArmCancel(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	dests := make([]*actor.PID, p.Actors)
	for i := range dests {
		dests[i] = sys.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	}
	ts := scheduler.NewTimerScheduler(sys.Root)
	delays := timerDelays(p)
	cancels := make([]scheduler.CancelFunc, p.N)
	start := time.Now()
	for i, d := range delays {
		cancels[i] = ts.SendOnce(d, dests[i%len(dests)], paFire{})
	}
	for _, c := range cancels {
		c()
	}
	return Sample{Wall: time.Since(start), Check: int64(len(cancels))}, nil
}

// ---- callrt

type (
	paCallReq   int64
	paCallReply int64
)

type paClient struct {
	server *actor.PID
	n      int
	done   chan int64
	err    chan error
}

func (a *paClient) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(paStart); !ok {
		return
	}
	var sum int64
	for i := 0; i < a.n; i++ { // blocking on a future inside an actor, as a gen_server call does
		res, err := ctx.RequestFuture(a.server, paCallReq(i), 5*time.Second).Result()
		if err != nil {
			a.err <- err
			return
		}
		sum += int64(res.(paCallReply))
	}
	a.done <- sum
}

func paCallRT(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	done := make(chan int64, 1)
	errc := make(chan error, 1)
	start := time.Now()
	server := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if m, ok := ctx.Message().(paCallReq); ok {
			ctx.Respond(paCallReply(m + 1))
		}
	}))
	client := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
		return &paClient{server: server, n: p.N, done: done, err: errc}
	}))
	sys.Root.Send(client, paStart{})
	var sum int64
	select {
	case sum = <-done:
	case err := <-errc:
		return Sample{}, err
	}
	wall := time.Since(start)
	paStopAll(sys, client, server)
	return Sample{Wall: wall, Check: sum}, nil
}

// paCallExt: RequestFuture from the root context, i.e. from outside any actor.
func paCallExt(p Params) (Sample, error) {
	sys := paSystem()
	defer sys.Shutdown()
	start := time.Now()
	server := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if m, ok := ctx.Message().(paCallReq); ok {
			ctx.Respond(paCallReply(m + 1))
		}
	}))
	var sum int64
	for i := 0; i < p.N; i++ {
		res, err := sys.Root.RequestFuture(server, paCallReq(i), 5*time.Second).Result()
		if err != nil {
			return Sample{}, err
		}
		sum += int64(res.(paCallReply))
	}
	wall := time.Since(start)
	paStopAll(sys, server)
	return Sample{Wall: wall, Check: sum}, nil
}
