// TCP echo: an echo server with one handler per connection, Colony's netio (one actor per
// connection, active-once delivery) against a goroutine-per-connection net server, under the
// same load from a separate client process.
//
// Design note.
//
// Problem. The figure that matters is the server's: its resident memory with 10k connections
// open and its round-trip throughput. With the load generator in the same process (the first
// version of this file), the client's goroutines and fds were counted with the server's, and 10k
// connections needed 20k fds in one process, over the hard limit here.
//
// Processes. Each sample is a child process of the suite (Workload.Child): a fresh heap, and a
// process that holds only the server. That process starts the server, then re-executes this
// binary with -tcpclient as the load generator (a grandchild, killed if its parent dies), and
// talks to it over its stdin/stdout:
//
//	client -> server  READY conns=N fdlimit=L      every connection dialled and one round trip
//	                                              checked on each
//	server            reads VmRSS of /proc/self/status: the server alone, connections up
//	server -> client  GO
//	client            every connection runs closed-loop 64-byte round trips (one in flight per
//	                  connection, each echo checked byte for byte): warm-up, then the
//	                  measured window, counted by per-connection counters read at both ends
//	client -> server  RESULT trips=T total=A window_ns=W ok=K errors=E first_error=...
//	server            reads VmRSS and VmHWM (peak) after the load and its CPU time since GO,
//	                  stops, reports
//
// Throughput is round trips per second over the window (reported as ns per round trip so that
// lower is better, like every metric of the suite). The server's CPU time per round trip (over
// warm-up and window, user+system from getrusage) is reported beside it: on a machine shared
// with other work it is far steadier than throughput, and it is the server's own cost. Memory is the server process's VmRSS with
// the connections established, and its VmHWM after the load. Both are absolute, not deltas: the
// Go runtime's own few MiB are in both servers' figures.
//
// Descriptors. Each process needs one fd per connection plus a few. Both raise RLIMIT_NOFILE's
// soft limit to the hard one and, when the hard one is too low and they may (root,
// CAP_SYS_RESOURCE), the hard one too. A server that still cannot fit N connections runs with as
// many as fit and says so in the report's notes instead of failing.
//
// Rejected: measuring RSS of the whole suite process (other workloads' retained heap), and an
// in-process client (see Problem). The goroutine server uses a 4 KiB buffer per connection, what
// a bufio-sized hand-written echo loop uses; io.Copy would allocate 32 KiB per connection and
// flatter Colony's memory ratio.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	tcpEchoMsg    = 64  // bytes per round trip
	tcpEchoSpare  = 128 // fds a process needs besides its connections
	tcpClientFlag = "-tcpclient"
)

// tcpEchoServer starts an echo server on 127.0.0.1 and returns its address and a stop function.
type tcpEchoServer func() (addr string, stop func(), err error)

// tcpEchoRun returns the RunFunc of the tcpecho workloads for one server implementation.
func tcpEchoRun(impl string, start tcpEchoServer) RunFunc {
	return func(p Params) (Sample, error) { return runTCPEchoSample(impl, start, p) }
}

// raiseNofile raises RLIMIT_NOFILE so that need descriptors fit, as far as this process may:
// soft to hard, then (root) hard and soft to need. It returns the soft limit in force.
func raiseNofile(need uint64) uint64 {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) != nil {
		return 0
	}
	if r.Max < need { // only a privileged process may raise the hard limit; try
		nr := syscall.Rlimit{Cur: need, Max: need}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nr) == nil {
			return need
		}
	}
	if r.Cur < r.Max {
		r.Cur = r.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
	}
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
	return r.Cur
}

// procStatus returns a "VmRSS"-style field of /proc/self/status in bytes (0 if absent).
func procStatus(field string) int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// startGoEcho starts the goroutine-per-connection echo server.
func startGoEcho() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := map[net.Conn]struct{}{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open[c] = struct{}{}
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { mu.Lock(); delete(open, c); mu.Unlock(); c.Close() }()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func() {
		ln.Close()
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}, nil
}

// tcpEchoWindow returns the warm-up and measured window of a sample.
func tcpEchoWindow(p Params) (warm, window time.Duration) {
	return p.Window / 3, p.Window
}

// runTCPEchoSample is one sample: this process serves, a child process loads it.
func runTCPEchoSample(impl string, start tcpEchoServer, p Params) (Sample, error) {
	conns := p.N
	var note string
	if lim := raiseNofile(uint64(conns + tcpEchoSpare)); lim < uint64(conns+tcpEchoSpare) {
		fit := max(1, int(lim)-tcpEchoSpare)
		note = fmt.Sprintf("tcpecho: %d connections asked, RLIMIT_NOFILE is %d and could not be raised: ran %d", conns, lim, fit)
		conns = fit
	}
	addr, stop, err := start()
	if err != nil {
		return Sample{}, fmt.Errorf("server: %w", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	exe, err := os.Executable()
	if err != nil {
		return Sample{}, err
	}
	warm, window := tcpEchoWindow(p)
	cmd := exec.Command(exe, tcpClientFlag, "-addr", addr, "-conns", strconv.Itoa(conns),
		"-warmup", warm.String(), "-window", window.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var cliErr tailBuffer // the client's last words, for the error (a child's stderr is not shown)
	cmd.Stderr = io.MultiWriter(os.Stderr, &cliErr)
	in, err := cmd.StdinPipe()
	if err != nil {
		return Sample{}, err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return Sample{}, err
	}
	if err := cmd.Start(); err != nil {
		return Sample{}, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(outp)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	expect := func(prefix string) (map[string]string, error) {
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), prefix+" "); ok {
				return parseKV(rest), nil
			}
		}
		_ = cmd.Wait() // its stderr is all in
		return nil, fmt.Errorf("client exited before %s: %s", prefix, cliErr.String())
	}
	if _, err := expect("READY"); err != nil {
		return Sample{}, err
	}
	rssUp := procStatus("VmRSS")
	memStats(impl, "connected")
	var prof *os.File
	if dir := os.Getenv("TCPECHO_CPUPROFILE"); dir != "" { // profile the server over the load
		name := fmt.Sprintf("%s/tcpecho-%s-%d.pprof", dir, impl, conns)
		if prof, err = os.Create(name); err == nil {
			_ = pprof.StartCPUProfile(prof)
		}
	}
	cpu0 := cpuTime()
	if _, err := io.WriteString(in, "GO\n"); err != nil {
		return Sample{}, err
	}
	res, err := expect("RESULT")
	cpu := cpuTime() - cpu0
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
	}
	if err != nil {
		return Sample{}, err
	}
	hwm, rssAfter := procStatus("VmHWM"), procStatus("VmRSS")
	memStats(impl, "after load")
	if dir := os.Getenv("TCPECHO_HEAPPROFILE"); dir != "" { // the server's heap after the load
		if f, err := os.Create(fmt.Sprintf("%s/tcpecho-%s-%d.heap.pprof", dir, impl, conns)); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		return Sample{}, fmt.Errorf("client: %w", err)
	}
	stop()
	stopped = true
	if e := res["errors"]; e != "0" {
		return Sample{}, fmt.Errorf("client: %s connection error(s), first: %s", e, unquoteKV(res["first_error"]))
	}
	trips, err1 := parseInt(res, "trips")
	wns, err2 := parseInt(res, "window_ns")
	ok, err3 := parseInt(res, "ok")
	total, err4 := parseInt(res, "total")
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return Sample{}, fmt.Errorf("client result: %w", err)
	}
	if trips == 0 {
		return Sample{}, errors.New("no round trip completed in the window")
	}
	const mib = 1 << 20
	s := Sample{
		Wall: time.Duration(wns),
		// Every connection verified its echoes: the answer is the connection count asked for
		// (when the fd limit forced fewer, the note says so).
		Check: ok + int64(p.N-conns),
		Extra: map[string]float64{
			"ns_per_trip":     float64(wns) / float64(trips),
			"cpu_ns_per_trip": float64(cpu) / float64(max(total, 1)),
			"trips_per_s":     float64(trips) / (float64(wns) / 1e9),
			"rss_mib":         float64(rssUp) / mib,
			"hwm_mib":         float64(hwm) / mib,
			"rss_after_mib":   float64(rssAfter) / mib,
			"conns":           float64(conns),
			"rss_per_conn_kb": float64(rssUp) / float64(conns) / 1024,
		},
		Note: note,
	}
	return s, nil
}

// memStats appends, when TCPECHO_MEMSTATS names a file, where the server's memory is (the Go heap, the
// goroutine stacks, what the runtime holds from the OS), its collections, goroutines and context
// switches so far, to that file.
func memStats(impl, when string) {
	name := os.Getenv("TCPECHO_MEMSTATS")
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	const mib = 1 << 20
	fmt.Fprintf(f, "tcpecho memstats %s %s: heap in use %.1f MiB (alloc %.1f, goal %.1f, unreleased %.1f), stacks %.1f MiB, sys %.1f MiB (metadata %.1f), %d GCs, %d goroutines, %d threads, RSS anon %.1f file %.1f MiB, %d/%d vol/invol ctx switches\n",
		impl, when, float64(m.HeapInuse)/mib, float64(m.HeapAlloc)/mib, float64(m.NextGC)/mib,
		float64(m.HeapSys-m.HeapReleased)/mib, float64(m.StackInuse)/mib,
		float64(m.Sys)/mib, float64(m.MSpanSys+m.MCacheSys+m.BuckHashSys+m.GCSys+m.OtherSys)/mib,
		m.NumGC, runtime.NumGoroutine(), procStatus("Threads")>>10,
		float64(procStatus("RssAnon"))/mib, float64(procStatus("RssFile"))/mib, ru.Nvcsw, ru.Nivcsw)
}

// tailBuffer keeps the last 2 KiB written to it. Safe for one writer and a reader after it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = append(t.b[:0], t.b[len(t.b)-2048:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// cpuTime is this process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// unquoteKV undoes the quoting of a value in a RESULT line.
func unquoteKV(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// tcpClientMain is the load generator (this binary with -tcpclient): see the design note.
func tcpClientMain(args []string) int {
	fs := flag.NewFlagSet("tcpclient", flag.ContinueOnError)
	addr := fs.String("addr", "", "server address")
	conns := fs.Int("conns", 1000, "connections")
	warm := fs.Duration("warmup", time.Second, "warm-up before the window")
	window := fs.Duration("window", 3*time.Second, "measured window")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "tcpclient: "+format+"\n", a...)
		return 1
	}
	n := *conns
	if lim := raiseNofile(uint64(n + tcpEchoSpare)); lim < uint64(n+tcpEchoSpare) {
		return fail("%d connections need %d fds; RLIMIT_NOFILE is %d and could not be raised", n, n+tcpEchoSpare, lim)
	}
	cs := make([]net.Conn, n)
	defer func() {
		for _, c := range cs {
			if c != nil {
				c.Close()
			}
		}
	}()
	// Dial with bounded concurrency (the listen backlog is finite), then one checked round trip
	// on each, so every server-side handler exists before the memory is read.
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.Load() != nil {
					return
				}
				c, err := net.DialTimeout("tcp", *addr, 30*time.Second)
				if err == nil {
					cs[i] = c
					c.SetDeadline(time.Now().Add(30 * time.Second))
					err = echoTrip(c, uint64(i), 0, make([]byte, tcpEchoMsg), make([]byte, tcpEchoMsg))
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, fmt.Errorf("connection %d: %w", i, err))
					return
				}
			}
		}()
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return fail("setup: %v", e)
	}
	var lim syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	fmt.Printf("READY conns=%d fdlimit=%d\n", n, lim.Cur)
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() || in.Text() != "GO" {
		return fail("no GO from the server")
	}

	type counter struct {
		n atomic.Int64
		_ [56]byte // one cache line each
	}
	counts := make([]counter, n)
	var stop atomic.Bool
	var nerr atomic.Int64
	var firstE atomic.Value
	deadline := time.Now().Add(*warm + *window + time.Minute)
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetDeadline(deadline)
			out, back := make([]byte, tcpEchoMsg), make([]byte, tcpEchoMsg)
			for seq := uint64(1); !stop.Load(); seq++ {
				if err := echoTrip(c, uint64(i), seq, out, back); err != nil {
					nerr.Add(1)
					firstE.CompareAndSwap(nil, fmt.Sprintf("connection %d: %v", i, err))
					return
				}
				counts[i].n.Add(1)
			}
		}()
	}
	sum := func() int64 {
		var s int64
		for i := range counts {
			s += counts[i].n.Load()
		}
		return s
	}
	time.Sleep(*warm)
	s0, t0 := sum(), time.Now()
	time.Sleep(*window)
	s1, t1 := sum(), time.Now()
	stop.Store(true)
	wg.Wait()
	ok := 0
	for i := range counts {
		if counts[i].n.Load() > 0 {
			ok++
		}
	}
	first := ""
	if e := firstE.Load(); e != nil {
		first = e.(string)
	}
	fmt.Printf("RESULT trips=%d total=%d window_ns=%d ok=%d errors=%d first_error=%s\n",
		s1-s0, sum(), t1.Sub(t0).Nanoseconds(), ok, nerr.Load(), strconv.Quote(strings.ReplaceAll(first, " ", "_")))
	return 0
}

// echoTrip sends one 64-byte message (connection id, sequence number, filler) and checks that
// exactly it comes back.
func echoTrip(c net.Conn, id, seq uint64, out, back []byte) error {
	binary.LittleEndian.PutUint64(out[0:], id)
	binary.LittleEndian.PutUint64(out[8:], seq)
	for i := 16; i < len(out); i++ {
		out[i] = byte(int(id) + int(seq) + i)
	}
	if _, err := c.Write(out); err != nil {
		return err
	}
	if _, err := io.ReadFull(c, back); err != nil {
		return err
	}
	for i := range out {
		if out[i] != back[i] {
			return fmt.Errorf("round trip %d: echo differs at byte %d", seq, i)
		}
	}
	return nil
}
