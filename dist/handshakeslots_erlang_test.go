//go:build linux

package dist_test

// The lock-out test: a real OTP node connects to a Colony node again and
// again while thousands of silent sockets are opened against it and
// renewed, from a process of their own (this test binary run again), so
// that the node's fds are counted apart from the attacker's. Linux only:
// it counts fds in /proc/self/fd, and raises RLIMIT_NOFILE, whose fields'
// types differ between the unixes.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/internal/disttest"
)

// attackEnv makes this test binary the attacker process.
const attackEnv = "COLONY_SILENT_ATTACK"

// attackMain is the attacker process: silentAttack against args[0] with
// args[1] sockets opened at args[2] a second, each renewed every args[3],
// until its standard input closes. It says "ramped N" once the first
// sockets are open (N of them opened), or "nofile H" and exits if its fd
// hard limit H is too low.
func attackMain(args []string) {
	if len(args) != 4 {
		fmt.Println("usage: addr sockets rate renew")
		os.Exit(2)
	}
	k, _ := strconv.Atoi(args[1])
	rate, _ := strconv.ParseFloat(args[2], 64)
	renew, _ := time.ParseDuration(args[3])
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Println("getrlimit:", err)
		os.Exit(2)
	}
	need := uint64(k) + 256
	if lim.Max < need {
		fmt.Printf("nofile %d\n", lim.Max)
		os.Exit(3)
	}
	if lim.Cur < need {
		lim.Cur = need
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(2)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		bufio.NewReader(os.Stdin).ReadByte() // EOF when the test ends
		cancel()
	}()
	var a silentAttack
	a.run(ctx, args[0], k, rate, renew, func() { fmt.Printf("ramped %d\n", a.opened.Load()) })
	fmt.Printf("done: opened %d, failed %d\n", a.opened.Load(), a.failed.Load())
	os.Exit(0)
}

// resources is what the node's process holds.
type resources struct {
	fds, goroutines int
	heap            uint64 // HeapInuse
}

func sample() resources {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r := resources{goroutines: runtime.NumGoroutine(), heap: ms.HeapInuse, fds: -1}
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		r.fds = len(ents)
	}
	return r
}

// erlPings has the erl node connect to node, ping it and disconnect,
// rounds times, and returns each round's connection time (EPMD lookup,
// TCP connect and handshake: net_kernel:connect_node) and the ping's
// answer.
func erlPings(t *testing.T, erl interface{ Eval(string) string }, node string, rounds int) ([]time.Duration, []string) {
	t.Helper()
	v := erl.Eval(fmt.Sprintf(`lists:map(fun(_) -> {ConnT, _} = timer:tc(net_kernel, connect_node, ['%[1]s']),
		PingR = net_adm:ping('%[1]s'), erlang:disconnect_node('%[1]s'), {ConnT, PingR} end, lists:seq(1, %[2]d)).`, node, rounds))
	var ds []time.Duration
	var answers []string
	for _, m := range regexp.MustCompile(`\{(\d+),(\w+)\}`).FindAllStringSubmatch(v, -1) {
		us, _ := strconv.Atoi(m[1])
		ds = append(ds, time.Duration(us)*time.Microsecond)
		answers = append(answers, m[2])
	}
	if len(ds) != rounds {
		t.Fatalf("erl's pings: %s", v)
	}
	return ds, answers
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// A real OTP peer connects, pings and disconnects, round after round,
// each within 100 ms, while 10,000 silent sockets (1,000 without
// COLONY_SOAK) are opened against the node and each renewed every 7 s;
// the node's fds, goroutines and heap stay bounded meanwhile.
func TestLegitimatePeerGetsInUnderSilentSockets(t *testing.T) {
	if os.Getenv(attackEnv) != "" {
		attackMain(flagArgs())
		return
	}
	sockets, rounds := 1000, 20
	if os.Getenv("COLONY_SOAK") != "" {
		sockets, rounds = 10000, 100
	}
	const within = 100 * time.Millisecond
	n, erl := erlPair(t, dist.Config{})
	node := string(n.Name())

	// Before: the peer's time unattacked, and the node's resources.
	calm, answers := erlPings(t, erl, node, rounds)
	if slices.ContainsFunc(answers, func(a string) bool { return a != "pong" }) {
		t.Fatalf("unattacked pings: %v", answers)
	}
	runtime.GC()
	before := sample()

	child := disttest.StartChild(t, "attacker", attackEnv, "-test.run=^TestLegitimatePeerGetsInUnderSilentSockets$",
		"--", n.Addr().String(), strconv.Itoa(sockets), "5000", "7s")
	t.Cleanup(func() { child.Kill(t) })
	var opened uint64
	eventually(t, 60*time.Second, "the attacker to open its sockets", func() bool {
		out := child.Output()
		if strings.Contains(out, "nofile ") || !child.Alive() {
			return true
		}
		if _, after, ok := strings.Cut(out, "ramped "); ok {
			fmt.Sscan(after, &opened)
			return true
		}
		return false
	})
	if out := child.Output(); strings.Contains(out, "nofile ") {
		t.Skipf("the attacker's fd hard limit is too low for %d sockets (%s): raise it (ulimit -Hn)", sockets, strings.TrimSpace(out))
	} else if opened == 0 {
		t.Fatalf("the attacker did not ramp up: %s", out)
	}
	// The node has taken every socket from its listen queue.
	eventually(t, 60*time.Second, "the node to accept the silent sockets", func() bool {
		st := n.Stats()
		return st.Refused.Total()+uint64(st.Handshakes) >= opened
	})

	// During: sample the resources while the peer pings.
	var mu sync.Mutex
	peak := before
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			r := sample()
			mu.Lock()
			peak.fds, peak.goroutines, peak.heap = max(peak.fds, r.fds), max(peak.goroutines, r.goroutines), max(peak.heap, r.heap)
			mu.Unlock()
		}
	}()
	// A lock-out shows as pang (a refused connection) or as seconds (a
	// SYN retransmitted, a handshake timed out): any such round fails the
	// test at once. A series with a round past 100 ms but every ping
	// answered is measured again, at most twice: on a machine loaded past
	// its cores the unattacked rounds pass 100 ms too (logged).
	var ds []time.Duration
	for series := 1; ; series++ {
		var answers []string
		ds, answers = erlPings(t, erl, node, rounds)
		if i := slices.IndexFunc(answers, func(a string) bool { return a != "pong" }); i >= 0 {
			t.Fatalf("round %d of series %d: %s after %v (stats %+v)", i, series, answers[i], ds[i], n.Stats())
		}
		slow := slices.IndexFunc(ds, func(d time.Duration) bool { return d > within })
		if slow < 0 {
			break
		}
		msg := fmt.Sprintf("series %d, round %d: connected after %v, want within %v (attacked median %v; unattacked median %v, max %v)",
			series, slow, ds[slow], within, pct(ds, 0.5), pct(calm, 0.5), slices.Max(calm))
		if series == 3 || ds[slow] > time.Second {
			t.Fatal(msg)
		}
		t.Log(msg + ": again")
	}
	close(stop)
	wg.Wait()
	// What the attack alone costs the node: CPU for 1,000 evictions.
	ev0, cpu0 := n.Stats().Refused.Evicted, cpuTime()
	eventually(t, 30*time.Second, "1,000 more evictions", func() bool { return n.Stats().Refused.Evicted >= ev0+1000 })
	cpu, st := cpuTime()-cpu0, n.Stats()
	child.Kill(t)

	t.Logf("%d silent sockets (%d opened in the ramp), %d rounds: connect unattacked median %v, max %v; attacked median %v, p99 %v, max %v",
		sockets, opened, rounds, pct(calm, 0.5), slices.Max(calm), pct(ds, 0.5), pct(ds, 0.99), slices.Max(ds))
	t.Logf("node: before %+v, peak %+v; stats %+v", before, peak, st)
	t.Logf("attacker: %s", strings.TrimSpace(child.Output()))
	t.Logf("the node's CPU under the attack alone: %v for %d evictions, %v each", cpu, st.Refused.Evicted-ev0, cpu/time.Duration(st.Refused.Evicted-ev0))
	if st.Refused.Evicted == 0 {
		t.Errorf("no eviction counted: the attack did not reach the node (stats %+v)", st)
	}
	const slots = dist.DefaultMaxHandshakes
	if before.fds >= 0 && peak.fds > before.fds+2*slots+32 {
		t.Errorf("fds went from %d to %d: more than the %d slots and the evicted unwinding", before.fds, peak.fds, slots)
	}
	if peak.goroutines > before.goroutines+2*slots+32 {
		t.Errorf("goroutines went from %d to %d", before.goroutines, peak.goroutines)
	}
	if peak.heap > before.heap+32<<20 {
		t.Errorf("heap in use went from %d to %d bytes", before.heap, peak.heap)
	}
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// flagArgs is the command line after "--" (the attacker's arguments).
func flagArgs() []string {
	for i, a := range os.Args {
		if a == "--" {
			return os.Args[i+1:]
		}
	}
	return nil
}
