// Workloads: what each benchmark does, how big it is, and what its correct answer is.
//
// Design note.
//
// Problem: the suite compares implementations that share no code (goroutines, Proto.Actor, Colony,
// Erlang), so a fast number can simply mean "did less work" or "did the wrong work". Each workload
// here therefore fixes three things every implementation must agree on:
//
//   - its Params, derived from -scale alone (so every implementation gets the same sizes);
//   - a Check value each run returns (a sum, an index, a count) and the Expect function that
//     computes the right answer from the Params; the runner marks a run WRONG when they differ,
//     and bench_test.go fails;
//   - its metrics: wall time always, plus workload-specific ones (p99 timer lateness, bytes per
//     idle actor).
//
// Rejected: per-implementation sizes "tuned to take a second each" — ratios would then compare
// different amounts of work. Rejected: checking correctness only in tests — a benchmark run at
// full scale can break where a tiny test does not (mailbox overflow, dropped messages), so every
// run is checked.
package main

import (
	"math"
	"time"
)

// Params sizes one workload. Every implementation of a workload gets identical Params.
type Params struct {
	N        int           // primary count: round trips, hops, messages, actors or calls
	Actors   int           // threadring ring size; forkjoin worker count
	Depth    int           // skynet tree depth: 10^Depth leaves
	MaxDelay time.Duration // timers: each delay is uniform in [1ms, MaxDelay]
	Base     time.Duration // timers: added to each delay (armcancel: so that none fires during the run)
	Seed     int64         // timers: seed of the delay sequence (same delays for every implementation)
	Window   time.Duration // tcpecho: the measured window (after a warm-up of a third of it)
}

// Sample is the outcome of one run of one workload by one implementation.
type Sample struct {
	Wall  time.Duration      // wall time of the measured section
	Check int64              // the workload's answer, compared with Workload.Expect
	Extra map[string]float64 // workload-specific metrics keyed by Metric.Key (besides wall)
	Note  string             `json:",omitempty"` // said once in the report's notes (tcpecho: fd limit)
}

// Metric is one number a workload reports. Lower is better for all of them.
type Metric struct {
	Key   string // "wall_ms" (from Sample.Wall) or a key of Sample.Extra
	Label string // column label
	Unit  string // printed after the value
}

var (
	metricWall      = Metric{Key: "wall_ms", Label: "wall", Unit: "ms"}
	metricP99Late   = Metric{Key: "p99_late_ms", Label: "p99 lateness", Unit: "ms"}
	metricMaxLate   = Metric{Key: "max_late_ms", Label: "max lateness", Unit: "ms"}
	metricBytesPerA = Metric{Key: "bytes_per_actor", Label: "bytes/actor", Unit: "B"}
	metricNsPerTrip = Metric{Key: "ns_per_trip", Label: "time/round trip", Unit: "ns"}
	metricCPUPerTr  = Metric{Key: "cpu_ns_per_trip", Label: "server CPU/round trip", Unit: "ns"}
	metricRSS       = Metric{Key: "rss_mib", Label: "server RSS, connected", Unit: "MiB"}
	metricHWM       = Metric{Key: "hwm_mib", Label: "server peak RSS", Unit: "MiB"}
)

// Workload describes one benchmark; implementations live in the per-implementation files.
type Workload struct {
	Name    string
	Desc    string
	Params  func(scale float64, quick bool) Params
	Ops     func(p Params) int64 // operations per run, for the ns/op column (0: none)
	OpName  string               // what one op is ("msg", "actor", "call")
	Expect  func(p Params) int64
	Metrics []Metric // the first is the headline metric
	// Child, when set, runs each sample in a fresh child process: a clean heap for memory, and
	// for latency tails (timers) no collector pacing or garbage left by the previous sample.
	Child bool
}

// scaled returns max(min, round(base*scale)).
func scaled(base int, scale float64, min int) int {
	n := int(math.Round(float64(base) * scale))
	if n < min {
		n = min
	}
	return n
}

// Default sizes at -scale 1. They follow the brief (1M round trips, 10M hops, ...) except where a
// size would push the whole default suite, four implementations times several runs on two cores,
// past ten minutes; DefaultSizes in the README lists them.
const (
	pingpongN   = 1_000_000
	threadringN = 10_000_000
	ringSize    = 503
	countingN   = 1_000_000
	forkjoinA   = 1000
	forkjoinM   = 10_000
	fanoutM     = 1000 // issue 21's fan-out: 1000 actors x 1000 messages
	spawnN      = 1_000_000
	skynetLeafs = 1_000_000
	memoryN     = 1_000_000
	timersN     = 100_000
	armCancelN  = 1_000_000
	armCancelA  = 1000 // destinations of the armcancel timers
	callrtN     = 200_000
	tcpEchoN1   = 1_000
	tcpEchoN2   = 10_000
)

func sumBelow(n int64) int64 { return n * (n - 1) / 2 } // 0+1+...+(n-1)

var workloads = []*Workload{
	{
		Name: "pingpong", Desc: "2 actors exchange N round trips",
		Params: func(s float64, q bool) Params { return Params{N: scaled(pingpongN, s, 10)} },
		Ops:    func(p Params) int64 { return 2 * int64(p.N) }, OpName: "msg",
		// The pinger sends 0..N-1 and the ponger echoes each; the pinger sums the echoes.
		Expect:  func(p Params) int64 { return sumBelow(int64(p.N)) },
		Metrics: []Metric{metricWall},
	},
	{
		Name: "threadring", Desc: "503 actors in a ring pass a token N hops",
		Params: func(s float64, q bool) Params { return Params{N: scaled(threadringN, s, 1000), Actors: ringSize} },
		Ops:    func(p Params) int64 { return int64(p.N) }, OpName: "hop",
		// Actor 0 gets token N; actor i gets N-i (mod ring); the one that gets 0 reports its index.
		Expect:  func(p Params) int64 { return int64(p.N % p.Actors) },
		Metrics: []Metric{metricWall},
	},
	{
		Name: "counting", Desc: "1 producer sends 1..N to a counter, then asks for the total",
		Params: func(s float64, q bool) Params { return Params{N: scaled(countingN, s, 10)} },
		Ops:    func(p Params) int64 { return int64(p.N) }, OpName: "msg",
		Expect:  func(p Params) int64 { n := int64(p.N); return n * (n + 1) / 2 },
		Metrics: []Metric{metricWall},
	},
	{
		Name: "forkjoin", Desc: "1000 actors each receive M messages from one producer",
		Params: func(s float64, q bool) Params {
			return Params{N: scaled(forkjoinM, s, 5), Actors: forkjoinA}
		},
		Ops: func(p Params) int64 { return int64(p.N) * int64(p.Actors) }, OpName: "msg",
		Expect:  func(p Params) int64 { return int64(p.N) * int64(p.Actors) }, // messages processed
		Metrics: []Metric{metricWall},
	},
	{
		// forkjoin at the size of issue 21's fan-out from outside: the producer is the
		// harness's own goroutine, a plain goroutine outside any actor system, and every
		// actor gets few enough messages that waking parked consumers is a large share.
		Name: "fanout", Desc: "one plain goroutine sends round robin to 1000 actors, M messages each",
		Params: func(s float64, q bool) Params {
			return Params{N: scaled(fanoutM, s, 5), Actors: forkjoinA}
		},
		Ops: func(p Params) int64 { return int64(p.N) * int64(p.Actors) }, OpName: "msg",
		Expect:  func(p Params) int64 { return int64(p.N) * int64(p.Actors) }, // messages processed
		Metrics: []Metric{metricWall},
	},
	{
		Name: "spawn", Desc: "N short-lived actors, each handles one message and exits",
		Params: func(s float64, q bool) Params { return Params{N: scaled(spawnN, s, 10)} },
		Ops:    func(p Params) int64 { return int64(p.N) }, OpName: "actor",
		// Actor i receives i; the sum of what the actors received.
		Expect:  func(p Params) int64 { return sumBelow(int64(p.N)) },
		Metrics: []Metric{metricWall},
	},
	{
		Name: "skynet", Desc: "10-ary tree of actors, 10^depth leaves reply their number, parents sum",
		Params: func(s float64, q bool) Params {
			d := int(math.Round(math.Log10(float64(skynetLeafs) * s)))
			return Params{Depth: max(1, min(d, 7))}
		},
		Ops: func(p Params) int64 { return skynetActors(p.Depth) }, OpName: "actor",
		Expect:  func(p Params) int64 { return sumBelow(pow10(p.Depth)) },
		Metrics: []Metric{metricWall},
	},
	{
		Name: "memory", Desc: "N idle actors: heap+stack bytes per actor (erlang: memory(processes))",
		Params: func(s float64, q bool) Params { return Params{N: scaled(memoryN, s, 1000)} },
		Ops:    func(p Params) int64 { return int64(p.N) }, OpName: "actor",
		// After measuring, every actor gets one message and acknowledges it: all N were alive.
		Expect:  func(p Params) int64 { return int64(p.N) },
		Metrics: []Metric{metricBytesPerA, metricWall},
		Child:   true,
	},
	{
		Name: "timers", Desc: "N actors each arm one random 1..1000ms timer: wall and lateness",
		Params: func(s float64, q bool) Params {
			d := 1000 * time.Millisecond
			if q {
				d = 50 * time.Millisecond
			}
			return Params{N: scaled(timersN, s, 10), MaxDelay: d, Seed: 42}
		},
		Ops:     func(p Params) int64 { return 0 },
		Expect:  func(p Params) int64 { return int64(p.N) }, // timers that fired
		Metrics: []Metric{metricWall, metricP99Late, metricMaxLate},
		// In the suite's own process the sample ran after the previous implementation's (100k
		// goroutines and their stacks, or 100k actors): its garbage and the collector's pacing
		// moved Colony's p99 from 1.5 to 2.5-4 ms in the same run.
		Child: true,
	},
	{
		Name: "armcancel", Desc: "arm N timers of 10..20s to 1000 idle actors, then cancel each: the cost of an unneeded timeout",
		Params: func(s float64, q bool) Params {
			return Params{N: scaled(armCancelN, s, 10), Actors: armCancelA, MaxDelay: 10 * time.Second, Base: 10 * time.Second, Seed: 7}
		},
		Ops: func(p Params) int64 { return int64(p.N) }, OpName: "timer",
		// Every timer is cancelled while pending (cancel_timer returns a time, Stop returns true).
		Expect:  func(p Params) int64 { return int64(p.N) },
		Metrics: []Metric{metricWall},
		// A fresh process each: the million stopped Go timers and their garbage that one sample
		// leaves behind are cleaned up (timer heaps, GC) during the next sample otherwise.
		Child: true,
	},
	{
		Name: "callrt", Desc: "gen_server-style call round trip, N sequential calls from an actor",
		Params: func(s float64, q bool) Params { return Params{N: scaled(callrtN, s, 10)} },
		Ops:    func(p Params) int64 { return int64(p.N) }, OpName: "call",
		// The client calls with 0..N-1, the server answers v+1; the client sums the answers.
		Expect:  func(p Params) int64 { n := int64(p.N); return n * (n + 1) / 2 },
		Metrics: []Metric{metricWall},
	},
	{
		Name: "callext", Desc: "call round trip from a plain goroutine outside the system, N sequential calls",
		Params: func(s float64, q bool) Params { return Params{N: scaled(callrtN, s, 10)} },
		Ops:    func(p Params) int64 { return int64(p.N) }, OpName: "call",
		Expect:  func(p Params) int64 { n := int64(p.N); return n * (n + 1) / 2 },
		Metrics: []Metric{metricWall},
	},
	tcpEchoWorkload("tcpecho1k", tcpEchoN1),
	tcpEchoWorkload("tcpecho10k", tcpEchoN2),
}

// tcpEchoWorkload is TCP echo with n connections (tcpecho.go): the server runs in a child
// process of its own and the load generator in another.
func tcpEchoWorkload(name string, n int) *Workload {
	return &Workload{
		Name: name, Desc: "TCP echo server, N connections, closed-loop 64 B round trips from a client process",
		Params: func(s float64, q bool) Params {
			w := 3 * time.Second
			if q {
				w = 300 * time.Millisecond
			}
			return Params{N: scaled(n, s, 10), Window: w}
		},
		Ops:     func(p Params) int64 { return 0 },
		Expect:  func(p Params) int64 { return int64(p.N) }, // connections whose every echo checked
		Metrics: []Metric{metricNsPerTrip, metricCPUPerTr, metricRSS, metricHWM},
		Child:   true,
	}
}

func workloadByName(name string) *Workload {
	for _, w := range workloads {
		if w.Name == name {
			return w
		}
	}
	return nil
}

func pow10(d int) int64 {
	n := int64(1)
	for range d {
		n *= 10
	}
	return n
}

// skynetActors is the number of actors in a skynet tree of the given depth: 1+10+...+10^depth.
func skynetActors(depth int) int64 {
	var n int64
	for i := 0; i <= depth; i++ {
		n += pow10(i)
	}
	return n
}

// timerDelays returns the N delays of the timers workload: deterministic for a seed, so every
// implementation arms the same timers. It is a 64-bit LCG (Knuth's MMIX constants) that the
// Erlang script reproduces bit for bit (timer_delays/3 in erlang/colonybench.escript).
func timerDelays(p Params) []time.Duration {
	ds := make([]time.Duration, p.N)
	maxMs := uint64(p.MaxDelay / time.Millisecond)
	if maxMs < 1 {
		maxMs = 1
	}
	x := uint64(p.Seed)*6364136223846793005 + 1442695040888963407
	for i := range ds {
		x = x*6364136223846793005 + 1442695040888963407
		ds[i] = p.Base + time.Duration(1+(x>>33)%maxMs)*time.Millisecond
	}
	return ds
}

// lateStats turns per-timer lateness (ns) into the timers metrics. It sorts late in place.
func lateStats(late []int64) map[string]float64 {
	if len(late) == 0 {
		return nil
	}
	sortInt64s(late)
	p99 := late[min(len(late)-1, int(math.Ceil(0.99*float64(len(late))))-1)]
	return map[string]float64{
		"p99_late_ms": float64(p99) / 1e6,
		"max_late_ms": float64(late[len(late)-1]) / 1e6,
	}
}
