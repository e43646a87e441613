package prom_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/observer/prom"
	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkObservability runs the bench suite's hot paths twice in one
// binary, interleaved: with nothing observing the System (off), and with
// a collector registered and scraped every 100 ms throughout (on: the
// sampling turned on, the mailbox histogram's scan at every scrape), a
// scrape rate far above a real Prometheus'. docs/benchmarks.md,
// "Observability cost", has the figures.
//
//	cd observer/prom && go test -run '^$' -bench Observability -count 7
func BenchmarkObservability(b *testing.B) {
	for _, w := range []struct {
		name string
		run  func(b *testing.B, sys *actor.System)
	}{
		{"pingpong", pingPong},
		{"counting", counting},
		{"spawn", spawn},
		{"call", call},
	} {
		for _, mode := range []string{"off", "on"} {
			b.Run(w.name+"/"+mode, func(b *testing.B) {
				sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
				if err != nil {
					b.Fatal(err)
				}
				defer sys.Shutdown(context.Background())
				if mode == "on" {
					c := prom.NewCollector(sys, prom.MinScanInterval(0))
					defer c.Close()
					reg := prometheus.NewRegistry()
					reg.MustRegister(c)
					stop := make(chan struct{})
					done := make(chan struct{})
					go func() {
						defer close(done)
						t := time.NewTicker(100 * time.Millisecond)
						defer t.Stop()
						for {
							select {
							case <-stop:
								return
							case <-t.C:
								if _, err := reg.Gather(); err != nil {
									panic(err)
								}
							}
						}
					}()
					defer func() { close(stop); <-done }()
				}
				cpu0 := cpuTime()
				b.ResetTimer()
				w.run(b, sys)
				b.StopTimer()
				// CPU time per op: on a shared, loaded machine it varies
				// less than wall time.
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// pingPong: two actors, b.N round trips (actor's BenchmarkPingPong).
func pingPong(b *testing.B, sys *actor.System) {
	done := make(chan struct{})
	n := b.N
	pong, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { c.Send(m.(actor.Pid), c.Self()) }))
	ping, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if n == 0 {
			close(done)
			return
		}
		n--
		c.Send(pong, c.Self())
	}))
	sys.Send(ping, pong)
	<-done
}

// counting: one producer outside the System, one counter (the suite's
// counting workload).
func counting(b *testing.B, sys *actor.System) {
	done := make(chan struct{})
	n := 0
	counter, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if n++; n == b.N {
			close(done)
		}
	}))
	for i := 0; i < b.N; i++ {
		sys.Send(counter, i)
	}
	<-done
}

// spawn: spawn from outside, one message, exit (the suite's spawn).
func spawn(b *testing.B, sys *actor.System) {
	beh := actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) })
	for i := 0; i < b.N; i++ {
		pid, err := sys.Spawn(beh)
		if err != nil {
			b.Fatal(err)
		}
		sys.Send(pid, i)
	}
	for sys.Stats().Live != 0 {
		time.Sleep(100 * time.Microsecond)
	}
}

// call: a gen_server-style call round trip from one actor to another
// (blocking in the handler: a hand-off each).
func call(b *testing.B, sys *actor.System) {
	srv, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			c.Reply(r, 1)
		}
	}))
	done := make(chan struct{})
	cl, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		for i := 0; i < b.N; i++ {
			if _, err := c.Call(srv, "x", time.Second); err != nil {
				panic(err)
			}
		}
		close(done)
	}))
	sys.Send(cl, "go")
	<-done
}

// cpuTime is the process's user and system CPU time, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
