// The baseline: what a Go programmer writes instead of an actor runtime.
//
// Design note.
//
// One goroutine per actor, a buffered channel as its mailbox (capacity mailboxCap, the same
// everywhere, so the idle-memory figure includes a realistic mailbox), a request struct carrying
// a reply channel for calls, time.NewTimer for timers. No pooling, no batching, no tricks a
// typical service would not have: the point is the honest alternative, not the fastest possible
// channel program. Completion is signalled the way such code usually does it: a result channel or
// a sync.WaitGroup.
//
// Every actor goroutine exits before a run returns (stop tokens, closed mailboxes), so runs do not
// leak goroutines into the next one and bench_test.go can check that.
package main

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// mailboxCap is the buffer of every goroutine actor's mailbox channel in the
// "goroutines" implementation, the baseline every ratio is taken against.
// "goroutines64" is the same code with mailboxCap64: what many Go programmers
// write, and far better than 16 slots when one producer feeds many consumers
// (fanout) or one consumer (counting), since every full buffer costs the
// producer a goroutine switch.
const (
	mailboxCap   = 16
	mailboxCap64 = 64
)

func init() {
	register("goroutines", goRuns(mailboxCap))
	g64 := goRuns(mailboxCap64)
	delete(g64, "tcpecho1k") // no mailbox channel in the echo server
	delete(g64, "tcpecho10k")
	register("goroutines64", g64)
}

// goRuns is the goroutine implementation of every workload with mailbox
// channels of capacity mcap.
func goRuns(mcap int) map[string]RunFunc {
	with := func(f func(Params, int) (Sample, error)) RunFunc {
		return func(p Params) (Sample, error) { return f(p, mcap) }
	}
	return map[string]RunFunc{
		"pingpong":   with(goPingPong),
		"threadring": with(goThreadRing),
		"counting":   with(goCounting),
		"forkjoin":   with(goForkJoin),
		"fanout":     with(goForkJoin), // forkjoin's code at fanout's sizes
		"spawn":      with(goSpawn),
		"skynet":     with(goSkynet),
		"memory":     with(goMemory),
		"timers":     goTimers,
		"armcancel":  goArmCancel,
		"callrt":     with(goCallRT),
		"callext":    with(goCallExt),
		"tcpecho1k":  tcpEchoRun("goroutines", startGoEcho),
		"tcpecho10k": tcpEchoRun("goroutines", startGoEcho),
	}
}

func goPingPong(p Params, mcap int) (Sample, error) {
	start := time.Now()
	ping := make(chan int64, mcap)
	pong := make(chan int64, mcap)
	go func() { // ponger: echo until the mailbox closes
		for v := range ping {
			pong <- v
		}
	}()
	done := make(chan int64)
	go func() { // pinger
		var sum int64
		for i := 0; i < p.N; i++ {
			ping <- int64(i)
			sum += <-pong
		}
		close(ping)
		done <- sum
	}()
	sum := <-done
	return Sample{Wall: time.Since(start), Check: sum}, nil
}

func goThreadRing(p Params, mcap int) (Sample, error) {
	start := time.Now()
	mbox := make([]chan int, p.Actors)
	for i := range mbox {
		mbox[i] = make(chan int, mcap)
	}
	result := make(chan int, 1)
	var wg sync.WaitGroup
	for i := range p.Actors {
		in, next := mbox[i], mbox[(i+1)%p.Actors]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range in {
				switch {
				case t > 0:
					next <- t - 1
				case t == 0: // this actor ends the ring: report, then send the stop token around
					result <- i
					next <- -1
				default: // stop token: pass it on and exit (the reporter's send is still buffered)
					next <- -1
					return
				}
			}
		}()
	}
	mbox[0] <- p.N
	idx := <-result
	wall := time.Since(start)
	wg.Wait() // every actor has forwarded the stop token once and exited
	return Sample{Wall: wall, Check: int64(idx)}, nil
}

type goCountMsg struct {
	v     int64
	reply chan int64 // non-nil: "what is the total?"
}

func goCounting(p Params, mcap int) (Sample, error) {
	start := time.Now()
	mbox := make(chan goCountMsg, mcap)
	go func() { // counter
		var total int64
		for m := range mbox {
			if m.reply != nil {
				m.reply <- total
				return
			}
			total += m.v
		}
	}()
	for i := 1; i <= p.N; i++ {
		mbox <- goCountMsg{v: int64(i)}
	}
	reply := make(chan int64, 1)
	mbox <- goCountMsg{reply: reply}
	total := <-reply
	return Sample{Wall: time.Since(start), Check: total}, nil
}

func goForkJoin(p Params, mcap int) (Sample, error) {
	start := time.Now()
	var wg sync.WaitGroup
	var processed atomic.Int64
	mbox := make([]chan int64, p.Actors)
	for i := range mbox {
		mbox[i] = make(chan int64, mcap)
		wg.Add(1)
		go func(in chan int64) {
			defer wg.Done()
			n := 0
			for range in {
				if n++; n == p.N {
					processed.Add(int64(n))
					return
				}
			}
		}(mbox[i])
	}
	for m := 0; m < p.N; m++ {
		for a := range mbox {
			mbox[a] <- int64(m)
		}
	}
	wg.Wait()
	return Sample{Wall: time.Since(start), Check: processed.Load()}, nil
}

func goSpawn(p Params, mcap int) (Sample, error) {
	start := time.Now()
	var wg sync.WaitGroup
	var sum atomic.Int64
	wg.Add(p.N)
	for i := 0; i < p.N; i++ {
		in := make(chan int64, mcap)
		go func() {
			sum.Add(<-in)
			wg.Done()
		}()
		in <- int64(i)
	}
	wg.Wait()
	return Sample{Wall: time.Since(start), Check: sum.Load()}, nil
}

func goSkynet(p Params, mcap int) (Sample, error) {
	start := time.Now()
	out := make(chan int64, 1)
	go goSkynetNode(0, pow10(p.Depth), out, mcap)
	sum := <-out
	return Sample{Wall: time.Since(start), Check: sum}, nil
}

func goSkynetNode(num, size int64, parent chan<- int64, mcap int) {
	if size == 1 {
		parent <- num
		return
	}
	mbox := make(chan int64, mcap)
	child := size / 10
	for i := int64(0); i < 10; i++ {
		go goSkynetNode(num+i*child, child, mbox, mcap)
	}
	var sum int64
	for range 10 {
		sum += <-mbox
	}
	parent <- sum
}

func goMemory(p Params, mcap int) (Sample, error) {
	mboxes := make([]chan struct{}, p.N) // harness-owned: allocated before the baseline
	var started, acked sync.WaitGroup
	var count atomic.Int64
	base := memBaseline()
	start := time.Now()
	started.Add(p.N)
	acked.Add(p.N)
	for i := range mboxes {
		in := make(chan struct{}, mcap)
		mboxes[i] = in
		go func() {
			started.Done()
			<-in // idle until the harness pokes it
			count.Add(1)
			acked.Done()
		}()
	}
	started.Wait()
	wall := time.Since(start)
	// Started is not parked yet: give every goroutine the chance to reach its receive.
	waitQuiet()
	bytes := memDelta(base)
	for _, in := range mboxes {
		in <- struct{}{}
	}
	acked.Wait()
	return Sample{Wall: wall, Check: count.Load(), Extra: map[string]float64{
		"bytes_per_actor": float64(bytes) / float64(p.N),
	}}, nil
}

func goTimers(p Params) (Sample, error) {
	delays := timerDelays(p)
	late := make([]int64, p.N)
	var wg sync.WaitGroup
	var fired atomic.Int64
	start := time.Now()
	wg.Add(p.N)
	for i := range delays {
		go func() {
			defer wg.Done()
			d := delays[i]
			deadline := time.Now().Add(d)
			t := time.NewTimer(d)
			<-t.C
			late[i] = int64(time.Since(deadline))
			fired.Add(1)
		}()
	}
	wg.Wait()
	return Sample{Wall: time.Since(start), Check: fired.Load(), Extra: lateStats(late)}, nil
}

// goArmCancel: time.AfterFunc and Stop, the Go way to have a timeout that is usually not
// needed (a goroutine per destination would add nothing a timer does not already do).
func goArmCancel(p Params) (Sample, error) {
	delays := timerDelays(p)
	ts := make([]*time.Timer, p.N)
	fire := func() {}
	start := time.Now()
	for i, d := range delays {
		ts[i] = time.AfterFunc(d, fire)
	}
	var cancelled int64
	for _, t := range ts {
		if t.Stop() {
			cancelled++
		}
	}
	return Sample{Wall: time.Since(start), Check: cancelled}, nil
}

type goCall struct {
	v     int64
	reply chan int64
}

func goCallRT(p Params, mcap int) (Sample, error) {
	start := time.Now()
	server := goCallServer(mcap)
	done := make(chan int64)
	go func() { done <- goCalls(server, p.N) }() // the client actor
	sum := <-done
	return Sample{Wall: time.Since(start), Check: sum}, nil
}

// goCallServer starts a goroutine answering v with v+1 until its channel
// is closed.
func goCallServer(mcap int) chan goCall {
	server := make(chan goCall, mcap)
	go func() {
		for c := range server {
			c.reply <- c.v + 1
		}
	}()
	return server
}

// goCalls makes n gen_server-style calls to server, a fresh reply channel
// each, closes it and returns the sum of the answers.
func goCalls(server chan goCall, n int) int64 {
	var sum int64
	for i := 0; i < n; i++ {
		reply := make(chan int64, 1)
		server <- goCall{v: int64(i), reply: reply}
		sum += <-reply
	}
	close(server)
	return sum
}

// goCallExt is goCallRT with the caller being the benchmark's own goroutine.
func goCallExt(p Params, mcap int) (Sample, error) {
	start := time.Now()
	sum := goCalls(goCallServer(mcap), p.N)
	return Sample{Wall: time.Since(start), Check: sum}, nil
}

// waitQuiet yields until the goroutine count stops changing and the scheduler has had time to
// park everything that is runnable: used before a memory reading so in-flight goroutines are idle.
func waitQuiet() {
	for range 10 {
		runtime.Gosched()
	}
	time.Sleep(50 * time.Millisecond)
}
