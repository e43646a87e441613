// The harness: runs samples, isolates them from each other, and checks every answer.
//
// Design note.
//
// Isolation. Samples run in this process, one at a time, with runtime.GC and debug.FreeOSMemory
// before each, so garbage and retained spans from the previous sample are not charged to the next.
// The memory workload is the exception: each of its samples runs in a child process (this same
// binary with -child), because a heap that has already held a million goroutines keeps stacks,
// spans and runtime bookkeeping around and would distort a per-actor byte count. Erlang samples
// are child processes by nature (one escript run each).
//
// Fairness. Runs are interleaved: run 1 of every implementation, then run 2 of every
// implementation, ..., so slow drift of the machine (thermal, other load) spreads over all
// implementations instead of landing on whichever ran last. Systems (Proto.Actor, Colony) are
// started before the clock starts and shut down after it stops, in every sample.
//
// Hangs. A sample that exceeds -timeout is reported as failed and the remaining samples of that
// implementation for that workload are skipped; its goroutines cannot be killed and are left
// behind, which is stated in the output. A wrong answer is reported as WRONG and kept out of the
// statistics.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RunFunc runs one sample of one workload.
type RunFunc func(p Params) (Sample, error)

// Impl is one implementation of (some of) the workloads.
type Impl struct {
	Name string
	Runs map[string]RunFunc
	// Unavailable, when it returns non-empty, says why this implementation cannot run at all
	// ("erlang: not installed, skipped").
	Unavailable func() string
}

// implOrder is the column order of the report; goroutines first, since ratios are against it;
// goroutines64 is the same baseline with 64-slot mailbox channels (goroutines.go).
// colony runs on netio's default backend (epoll on Linux); colony-once, colony-uring and
// colony-portable are, for the TCP echo workloads only, Colony's echo server in active-once mode
// and on its other IO backends.
var implOrder = []string{"goroutines", "goroutines64", "colony", "colony-once", "colony-uring", "colony-portable", "protoactor", "erlang"}

var impls = map[string]*Impl{}

func register(name string, runs map[string]RunFunc) {
	if impls[name] != nil {
		panic("bench: implementation registered twice: " + name)
	}
	impls[name] = &Impl{Name: name, Runs: runs}
}

// registerUnavailable records an implementation that is part of the suite but cannot run in this
// build, with the reason printed instead of its numbers.
//
//lint:ignore U1000 called by colony_missing.go, built with -tags nocolony
func registerUnavailable(name, why string) {
	impls[name] = &Impl{Name: name, Unavailable: func() string { return why }}
}

// Outcome is one attempted sample: a Sample, or why there is none.
type Outcome struct {
	Sample
	Err   string `json:",omitempty"`
	Wrong bool   `json:",omitempty"` // Check differed from the expected answer
}

// runSample runs one sample of w by impl, isolated and checked.
func runSample(w *Workload, impl *Impl, p Params, timeout time.Duration) Outcome {
	run := impl.Runs[w.Name]
	if w.Child && impl.Name != "erlang" {
		run = func(p Params) (Sample, error) { return runChild(w.Name, impl.Name, p, timeout) }
	}
	isolate()
	type res struct {
		s   Sample
		err error
	}
	ch := make(chan res, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- res{err: fmt.Errorf("panic: %v\n%s", r, debug.Stack())}
			}
		}()
		s, err := run(p)
		ch <- res{s, err}
	}()
	var r res
	select {
	case r = <-ch:
	case <-time.After(timeout):
		return Outcome{Err: fmt.Sprintf("timed out after %v (its goroutines are left running)", timeout)}
	}
	if r.err != nil {
		return Outcome{Err: r.err.Error()}
	}
	o := Outcome{Sample: r.s}
	if want := w.Expect(p); r.s.Check != want {
		o.Wrong = true
		o.Err = fmt.Sprintf("WRONG: check=%d, want %d", r.s.Check, want)
	}
	return o
}

// isolate collects the previous sample's garbage and returns freed memory to the OS.
func isolate() {
	runtime.GC()
	debug.FreeOSMemory()
}

// memBaseline and memDelta measure the heap and stack bytes in use, after a full GC, between
// two points; the memory workload divides the delta by the number of actors.
func memBaseline() uint64 {
	isolate()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

func memDelta(base uint64) int64 {
	return int64(memBaseline()) - int64(base)
}

// childResultPrefix starts the one line a child process prints with its Sample as JSON.
const childResultPrefix = "BENCH-CHILD-RESULT "

// runChild runs one sample in a fresh process: this binary with -child.
func runChild(workload, impl string, p Params, timeout time.Duration) (Sample, error) {
	exe, err := os.Executable()
	if err != nil {
		return Sample{}, err
	}
	pj, _ := json.Marshal(p)
	cmd := exec.Command(exe, "-child", workload, "-impl", impl, "-params", string(pj))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmdOutputTimeout(cmd, timeout)
	if err != nil {
		return Sample{}, fmt.Errorf("child %s/%s: %v: %s", workload, impl, err, lastLines(stderr.String(), 5))
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, childResultPrefix); ok {
			var o Outcome
			if err := json.Unmarshal([]byte(rest), &o); err != nil {
				return Sample{}, fmt.Errorf("child %s/%s: bad result %q: %v", workload, impl, rest, err)
			}
			if o.Err != "" {
				return Sample{}, errors.New(o.Err)
			}
			return o.Sample, nil
		}
	}
	return Sample{}, fmt.Errorf("child %s/%s printed no result: %s", workload, impl, lastLines(string(out)+stderr.String(), 5))
}

// childMain is the -child entry point: run one sample in this fresh process and print it.
func childMain(workload, impl, params string) int {
	w := workloadByName(workload)
	im := impls[impl]
	if w == nil || im == nil || im.Runs[workload] == nil {
		fmt.Fprintf(os.Stderr, "bench: -child: no %s implementation of %q\n", impl, workload)
		return 2
	}
	var p Params
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		fmt.Fprintf(os.Stderr, "bench: -child: bad -params: %v\n", err)
		return 2
	}
	s, err := im.Runs[workload](p)
	o := Outcome{Sample: s}
	if err != nil {
		o.Err = err.Error()
	}
	b, _ := json.Marshal(o)
	fmt.Printf("%s%s\n", childResultPrefix, b)
	return 0
}

// cmdOutputTimeout runs cmd and returns its stdout, killing it after timeout.
func cmdOutputTimeout(cmd *exec.Cmd, timeout time.Duration) ([]byte, error) {
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return stdout.Bytes(), err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return stdout.Bytes(), fmt.Errorf("killed after %v", timeout)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// parseKV parses "key=value key=value" (the Erlang result line) into a map.
func parseKV(line string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(line))
	sc.Split(bufio.ScanWords)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			m[k] = v
		}
	}
	return m
}

func parseInt(m map[string]string, k string) (int64, error) {
	v, ok := m[k]
	if !ok {
		return 0, fmt.Errorf("missing %s", k)
	}
	return strconv.ParseInt(v, 10, 64)
}

func sortInt64s(s []int64) { slices.Sort(s) }
