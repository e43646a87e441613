//go:build !nocolony

// Colony (github.com/colonyrt/colony/actor): the same workloads on Colony's public API.
//
// Design note.
//
// Written as a Colony user would: behaviours are values with a Receive method (or ActorFunc),
// sys.Send from outside, c.Send/c.Spawn between actors, c.Call and c.Reply for the call round
// trip (the caller blocks inside its handler; Colony hands its scheduler role to a spare
// goroutine), c.SendAfter for timers, c.Stop(actor.Normal) for an actor that is done, and
// sys.Wait when a workload is "until every actor has exited" (spawn). One System per sample,
// started before the clock starts and shut down after it stops; MaxActors is raised to 1<<22 so
// that spawn and skynet (up to 1.1M actors live at once) never hit the slab's default bound.
//
// Completion is reported to the harness through Go channels and WaitGroups, as in the goroutine
// and Proto.Actor implementations. An error from Spawn/Send/Call inside a handler is recorded
// in a colFail and ends the sample at once with that error instead of hanging until -timeout.
package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

func init() {
	register("colony", map[string]RunFunc{
		"pingpong":   colPingPong,
		"threadring": colThreadRing,
		"counting":   colCounting,
		"forkjoin":   colForkJoin,
		"fanout":     colForkJoin, // forkjoin's code at fanout's sizes
		"spawn":      colSpawn,
		"skynet":     colSkynet,
		"memory":     colMemory,
		"timers":     colTimers,
		"armcancel":  colArmCancel,
		"callrt":     colCallRT,
		"callext":    colCallExt,
		"tcpecho1k":  tcpEchoRun("colony", startColonyEcho),
		"tcpecho10k": tcpEchoRun("colony", startColonyEcho),
	})
	// The same echo server on netio's other backends, and in active-once mode
	// (tcpecho_colony.go).
	for name, v := range map[string]struct {
		b    netio.Backend
		once bool
	}{
		"colony-uring":    {netio.Uring, colEchoOnce},
		"colony-portable": {netio.Portable, colEchoOnce},
		"colony-once":     {"", true},
	} {
		start := startColonyEchoOn(v.b, v.once)
		register(name, map[string]RunFunc{
			"tcpecho1k":  tcpEchoRun(name, start),
			"tcpecho10k": tcpEchoRun(name, start),
		})
	}
}

// colMaxActors bounds the slab for the benchmarks; storage is allocated on use.
const colMaxActors = 1 << 22

func colStart() (*actor.System, error) {
	return actor.Start(actor.Config{MaxActors: colMaxActors})
}

// colStop waits for every actor to exit (the workloads end with none left), then shuts down.
func colStop(sys *actor.System) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	werr := sys.Wait(ctx)
	serr := sys.Shutdown(ctx)
	if werr != nil {
		return fmt.Errorf("colony: actors still live after the workload: %w", werr)
	}
	return serr
}

// colFail carries the first error raised inside a handler to the waiting harness.
type colFail struct {
	once sync.Once
	ch   chan struct{}
	err  error
}

func newColFail() *colFail { return &colFail{ch: make(chan struct{})} }

func (f *colFail) set(err error) {
	f.once.Do(func() { f.err = err; close(f.ch) })
}

// check records err (if any) and reports whether the handler may go on.
func (f *colFail) check(err error) bool {
	if err != nil {
		f.set(err)
		return false
	}
	return true
}

// wait waits for done or the first handler error.
func (f *colFail) wait(done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-f.ch:
		return f.err
	}
}

// wgChan turns a WaitGroup into a channel closed when it reaches zero.
func wgChan(wg *sync.WaitGroup) <-chan struct{} {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	return ch
}

// finish stops sys and folds its error into the sample's.
func colFinish(sys *actor.System, s Sample, err error) (Sample, error) {
	if serr := colStop(sys); err == nil {
		err = serr
	}
	return s, err
}

// ---- pingpong

type (
	colPing struct {
		v    int64
		from actor.Pid
	}
	colPong  int64
	colGo    struct{}
	colValue int64
)

type colPinger struct {
	pong actor.Pid
	i, n int64
	sum  int64
	done chan struct{}
	fail *colFail
}

func (a *colPinger) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case colGo:
		a.fail.check(c.Send(a.pong, colPing{v: 0, from: c.Self()}))
	case colPong:
		a.sum += int64(m)
		if a.i++; a.i == a.n {
			close(a.done)
			c.Stop(actor.Normal)
			return
		}
		a.fail.check(c.Send(a.pong, colPing{v: a.i, from: c.Self()}))
	}
}

func colPingPong(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	fail := newColFail()
	start := time.Now()
	pong, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch m := msg.(type) {
		case colPing:
			fail.check(c.Send(m.from, colPong(m.v)))
		case colGo: // stop
			c.Stop(actor.Normal)
		}
	}))
	if err != nil {
		return colFinish(sys, Sample{}, err)
	}
	pinger := &colPinger{pong: pong, n: int64(p.N), done: make(chan struct{}), fail: fail}
	ping, err := sys.Spawn(pinger)
	if err == nil {
		err = sys.Send(ping, colGo{})
	}
	if err == nil {
		err = fail.wait(pinger.done)
	}
	wall := time.Since(start)
	_ = sys.Send(pong, colGo{})
	return colFinish(sys, Sample{Wall: wall, Check: pinger.sum}, err)
}

// ---- threadring

type (
	colNext  actor.Pid
	colToken int
)

type colRinger struct {
	i        int
	next     actor.Pid
	reported bool
	result   chan int
	fail     *colFail
}

func (a *colRinger) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case colNext:
		a.next = actor.Pid(m)
	case colToken:
		switch {
		case m > 0:
			a.fail.check(c.Send(a.next, m-1))
		case m == 0: // this actor ends the ring: report, then send the stop token around
			a.reported = true
			a.result <- a.i
			a.fail.check(c.Send(a.next, colToken(-1)))
		default: // stop token: pass it on (unless it came back to the reporter) and stop
			if !a.reported {
				a.fail.check(c.Send(a.next, m))
			}
			c.Stop(actor.Normal)
		}
	}
}

func colThreadRing(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	fail := newColFail()
	result := make(chan int, 1)
	start := time.Now()
	pids := make([]actor.Pid, p.Actors)
	for i := range pids {
		if pids[i], err = sys.Spawn(&colRinger{i: i, result: result, fail: fail}); err != nil {
			return colFinish(sys, Sample{}, err)
		}
	}
	for i, pid := range pids {
		if err := sys.Send(pid, colNext(pids[(i+1)%len(pids)])); err != nil {
			return colFinish(sys, Sample{}, err)
		}
	}
	if err := sys.Send(pids[0], colToken(p.N)); err != nil {
		return colFinish(sys, Sample{}, err)
	}
	var idx int
	select {
	case idx = <-result:
	case <-fail.ch:
		return colFinish(sys, Sample{}, fail.err)
	}
	return colFinish(sys, Sample{Wall: time.Since(start), Check: int64(idx)}, nil)
}

// ---- counting

type (
	colAdd int64
	colGet struct{}
)

type colCounter struct{ total int64 }

func (a *colCounter) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case colAdd:
		a.total += int64(m)
	case actor.Request:
		if _, ok := m.Msg.(colGet); ok {
			c.Reply(m, a.total)
			c.Stop(actor.Normal)
		}
	}
}

func colCounting(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	start := time.Now()
	cnt, err := sys.Spawn(&colCounter{})
	if err != nil {
		return colFinish(sys, Sample{}, err)
	}
	for i := 1; i <= p.N; i++ {
		if err := sys.Send(cnt, colAdd(i)); err != nil {
			return colFinish(sys, Sample{}, err)
		}
	}
	res, err := sys.Call(cnt, colGet{}, time.Minute)
	if err != nil {
		return colFinish(sys, Sample{}, err)
	}
	return colFinish(sys, Sample{Wall: time.Since(start), Check: res.(int64)}, nil)
}

// ---- forkjoin

type colWork int64

type colWorker struct {
	n, m      int
	processed *atomic.Int64
	wg        *sync.WaitGroup
}

func (a *colWorker) Receive(c *actor.Context, msg any) {
	if _, ok := msg.(colWork); ok {
		if a.n++; a.n == a.m {
			a.processed.Add(int64(a.n))
			a.wg.Done()
			c.Stop(actor.Normal)
		}
	}
}

func colForkJoin(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	var wg sync.WaitGroup
	var processed atomic.Int64
	start := time.Now()
	pids := make([]actor.Pid, p.Actors)
	wg.Add(p.Actors)
	for i := range pids {
		if pids[i], err = sys.Spawn(&colWorker{m: p.N, processed: &processed, wg: &wg}); err != nil {
			return colFinish(sys, Sample{}, err)
		}
	}
	for m := 0; m < p.N; m++ {
		for _, pid := range pids {
			if err := sys.Send(pid, colWork(m)); err != nil {
				return colFinish(sys, Sample{}, err)
			}
		}
	}
	wg.Wait()
	return colFinish(sys, Sample{Wall: time.Since(start), Check: processed.Load()}, nil)
}

// ---- spawn

func colSpawn(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	var sum atomic.Int64
	behaviour := actor.ActorFunc(func(c *actor.Context, msg any) {
		if v, ok := msg.(colValue); ok {
			sum.Add(int64(v))
			c.Stop(actor.Normal)
		}
	})
	start := time.Now()
	for i := 0; i < p.N; i++ {
		pid, err := sys.Spawn(behaviour)
		if err == nil {
			err = sys.Send(pid, colValue(i))
		}
		if err != nil {
			return colFinish(sys, Sample{}, fmt.Errorf("actor %d: %w", i, err))
		}
	}
	// Every actor has exited (and its slot is reclaimed): the end of the workload.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := sys.Wait(ctx); err != nil {
		return colFinish(sys, Sample{}, err)
	}
	return colFinish(sys, Sample{Wall: time.Since(start), Check: sum.Load()}, nil)
}

// ---- skynet

type (
	colSkyStart struct {
		num, size int64
		parent    actor.Pid
	}
	colSkyResult int64
)

type colSky struct {
	parent  actor.Pid
	root    chan int64 // root only
	sum     int64
	replies int
	fail    *colFail
}

func (a *colSky) reply(c *actor.Context, v int64) {
	if a.root != nil {
		a.root <- v
	} else {
		a.fail.check(c.Send(a.parent, colSkyResult(v)))
	}
	c.Stop(actor.Normal)
}

func (a *colSky) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case colSkyStart:
		a.parent = m.parent
		if m.size == 1 {
			a.reply(c, m.num)
			return
		}
		child := m.size / 10
		for i := int64(0); i < 10; i++ {
			pid, err := c.Spawn(&colSky{fail: a.fail})
			if !a.fail.check(err) {
				return
			}
			if !a.fail.check(c.Send(pid, colSkyStart{num: m.num + i*child, size: child, parent: c.Self()})) {
				return
			}
		}
	case colSkyResult:
		a.sum += int64(m)
		if a.replies++; a.replies == 10 {
			a.reply(c, a.sum)
		}
	}
}

func colSkynet(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	fail := newColFail()
	done := make(chan int64, 1)
	start := time.Now()
	root, err := sys.Spawn(&colSky{root: done, fail: fail})
	if err == nil {
		err = sys.Send(root, colSkyStart{num: 0, size: pow10(p.Depth)})
	}
	if err != nil {
		return colFinish(sys, Sample{}, err)
	}
	var sum int64
	select {
	case sum = <-done:
	case <-fail.ch:
		return colFinish(sys, Sample{}, fail.err)
	}
	return colFinish(sys, Sample{Wall: time.Since(start), Check: sum}, nil)
}

// ---- memory

type colPoke struct{}

// colIdle is one behaviour value shared by every idle actor (it holds no per-actor state), as
// Proto.Actor's PropsFromFunc shares one function.
type colIdle struct {
	started, acked *sync.WaitGroup
	count          *atomic.Int64
}

func (a *colIdle) Init(c *actor.Context) { a.started.Done() }

func (a *colIdle) Receive(c *actor.Context, msg any) {
	if _, ok := msg.(colPoke); ok {
		a.count.Add(1)
		a.acked.Done()
		c.Stop(actor.Normal)
	}
}

func colMemory(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	pids := make([]actor.Pid, p.N) // harness-owned: allocated before the baseline
	var started, acked sync.WaitGroup
	var count atomic.Int64
	idle := &colIdle{started: &started, acked: &acked, count: &count}
	base := memBaseline()
	start := time.Now()
	started.Add(p.N)
	acked.Add(p.N)
	for i := range pids {
		if pids[i], err = sys.Spawn(idle); err != nil {
			return colFinish(sys, Sample{}, fmt.Errorf("actor %d: %w", i, err))
		}
	}
	started.Wait() // every actor has had its first activation and parked
	wall := time.Since(start)
	waitQuiet()
	bytes := memDelta(base)
	for _, pid := range pids {
		if err := sys.Send(pid, colPoke{}); err != nil {
			return colFinish(sys, Sample{}, err)
		}
	}
	acked.Wait()
	return colFinish(sys, Sample{Wall: wall, Check: count.Load(), Extra: map[string]float64{
		"bytes_per_actor": float64(bytes) / float64(p.N),
	}}, nil)
}

// ---- timers

type colFire struct{}

type colTimer struct {
	i        int
	delay    time.Duration
	deadline time.Time
	late     []int64
	fired    *atomic.Int64
	wg       *sync.WaitGroup
	fail     *colFail
}

func (a *colTimer) Init(c *actor.Context) {
	a.deadline = time.Now().Add(a.delay)
	_, err := c.SendAfter(c.Self(), colFire{}, a.delay)
	a.fail.check(err)
}

func (a *colTimer) Receive(c *actor.Context, msg any) {
	if _, ok := msg.(colFire); ok {
		a.late[a.i] = int64(time.Since(a.deadline))
		a.fired.Add(1)
		a.wg.Done()
		c.Stop(actor.Normal)
	}
}

func colTimers(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	fail := newColFail()
	delays := timerDelays(p)
	late := make([]int64, p.N)
	var wg sync.WaitGroup
	var fired atomic.Int64
	start := time.Now()
	wg.Add(p.N)
	for i, d := range delays {
		if _, err := sys.Spawn(&colTimer{i: i, delay: d, late: late, fired: &fired, wg: &wg, fail: fail}); err != nil {
			return colFinish(sys, Sample{}, err)
		}
	}
	if err := fail.wait(wgChan(&wg)); err != nil {
		return colFinish(sys, Sample{}, err)
	}
	return colFinish(sys, Sample{Wall: time.Since(start), Check: fired.Load(), Extra: lateStats(late)}, nil)
}

// ---- armcancel

func colArmCancel(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	dests := make([]actor.Pid, p.Actors)
	for i := range dests {
		if dests[i], err = sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			if _, ok := msg.(colGo); ok {
				c.Stop(actor.Normal)
			}
		})); err != nil {
			return colFinish(sys, Sample{}, err)
		}
	}
	delays := timerDelays(p)
	refs := make([]actor.TimerRef, p.N)
	start := time.Now()
	for i, d := range delays {
		if refs[i], err = sys.SendAfter(dests[i%len(dests)], colFire{}, d); err != nil {
			return colFinish(sys, Sample{}, err)
		}
	}
	var cancelled int64
	for _, r := range refs {
		if sys.CancelTimer(r) {
			cancelled++
		}
	}
	wall := time.Since(start)
	for _, d := range dests {
		if err := sys.Send(d, colGo{}); err != nil {
			return colFinish(sys, Sample{}, err)
		}
	}
	return colFinish(sys, Sample{Wall: wall, Check: cancelled}, nil)
}

// ---- callrt

type (
	colCallReq   int64
	colCallReply int64
)

type colClient struct {
	server actor.Pid
	n      int
	sum    int64
	done   chan struct{}
	fail   *colFail
}

func (a *colClient) Receive(c *actor.Context, msg any) {
	if _, ok := msg.(colGo); !ok {
		return
	}
	for i := 0; i < a.n; i++ { // a blocking call inside a handler, as with gen_server:call
		res, err := c.Call(a.server, colCallReq(i), 5*time.Second)
		if !a.fail.check(err) {
			return
		}
		a.sum += int64(res.(colCallReply))
	}
	close(a.done)
	c.Stop(actor.Normal)
}

func colCallRT(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	fail := newColFail()
	start := time.Now()
	server, err := sys.Spawn(colCallServer)
	if err != nil {
		return colFinish(sys, Sample{}, err)
	}
	client := &colClient{server: server, n: p.N, done: make(chan struct{}), fail: fail}
	cpid, err := sys.Spawn(client)
	if err == nil {
		err = sys.Send(cpid, colGo{})
	}
	if err == nil {
		err = fail.wait(client.done)
	}
	wall := time.Since(start)
	_ = sys.Send(server, colGo{})
	return colFinish(sys, Sample{Wall: wall, Check: client.sum}, err)
}

// colCallServer answers colCallReq v with v+1 and stops on colGo.
var colCallServer = actor.ActorFunc(func(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Request:
		if v, ok := m.Msg.(colCallReq); ok {
			c.Reply(m, colCallReply(v+1))
		}
	case colGo: // stop
		c.Stop(actor.Normal)
	}
})

// colCallExt: System.Call from the benchmark's own goroutine.
func colCallExt(p Params) (Sample, error) {
	sys, err := colStart()
	if err != nil {
		return Sample{}, err
	}
	start := time.Now()
	server, err := sys.Spawn(colCallServer)
	if err != nil {
		return colFinish(sys, Sample{}, err)
	}
	var sum int64
	for i := 0; i < p.N; i++ {
		res, err := sys.Call(server, colCallReq(i), 5*time.Second)
		if err != nil {
			return colFinish(sys, Sample{}, err)
		}
		sum += int64(res.(colCallReply))
	}
	wall := time.Since(start)
	_ = sys.Send(server, colGo{})
	return colFinish(sys, Sample{Wall: wall, Check: sum}, nil)
}
