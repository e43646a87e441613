package main

import (
	"encoding/xml"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets this test binary serve as the -child process of the memory workload, so the
// smoke test exercises the same subprocess path as the real suite.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == tcpClientFlag {
		os.Exit(tcpClientMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		fs := flag.NewFlagSet("child", flag.ExitOnError)
		child := fs.String("child", "", "")
		impl := fs.String("impl", "", "")
		params := fs.String("params", "", "")
		_ = fs.Parse(os.Args[1:])
		os.Exit(childMain(*child, *impl, *params))
	}
	os.Exit(m.Run())
}

// smokeScale makes every workload tiny (the Params minimums apply): the point is the answer,
// not the time.
const smokeScale = 0.001

// TestSmoke runs every workload of every available implementation at a tiny size through the
// real harness path (runSample: isolation, child process for memory, answer check) and fails
// on any error or wrong answer, so the suite cannot silently measure broken code.
func TestSmoke(t *testing.T) {
	for _, name := range implOrder {
		im := impls[name]
		if im == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if im.Unavailable != nil {
				if why := im.Unavailable(); why != "" {
					t.Skip(why)
				}
			}
			for _, w := range workloads {
				t.Run(w.Name, func(t *testing.T) {
					if im.Runs[w.Name] == nil {
						t.Skip("not implemented")
					}
					p := w.Params(smokeScale, true)
					before := runtime.NumGoroutine()
					o := runSample(w, im, p, 60*time.Second)
					if o.Err != "" {
						t.Fatalf("%s/%s %+v: %s", name, w.Name, p, o.Err)
					}
					if want := w.Expect(p); o.Check != want {
						t.Fatalf("%s/%s %+v: check = %d, want %d", name, w.Name, p, o.Check, want)
					}
					if o.Wall <= 0 {
						t.Errorf("%s/%s: wall time %v, want > 0", name, w.Name, o.Wall)
					}
					for _, m := range w.Metrics {
						v, ok := metricValue(o.Sample, m.Key)
						if !ok || v <= 0 {
							t.Errorf("%s/%s: metric %s = %v (present %v), want > 0", name, w.Name, m.Key, v, ok)
						}
					}
					if name == "goroutines" || name == "goroutines64" {
						waitGoroutines(t, before)
					}
				})
			}
		})
	}
}

// waitGoroutines polls, with a deadline, until the goroutine count is back to want: the
// goroutine implementations must not leak actors into the next sample.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d left running, want %d", runtime.NumGoroutine(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestExpectAtFullScale pins the answers the brief states for full-size runs.
func TestExpectAtFullScale(t *testing.T) {
	sky := workloadByName("skynet")
	p := sky.Params(1, false)
	if p.Depth != 6 || sky.Expect(p) != 499999500000 {
		t.Errorf("skynet at scale 1: depth %d, expect %d; want depth 6, 499999500000", p.Depth, sky.Expect(p))
	}
	tr := workloadByName("threadring")
	if p := tr.Params(1, false); p.Actors != 503 || p.N != 10_000_000 {
		t.Errorf("threadring at scale 1: %+v", p)
	}
}

func TestTimerDelays(t *testing.T) {
	p := Params{N: 10000, MaxDelay: time.Second, Seed: 42}
	ds := timerDelays(p)
	lo, hi := time.Hour, time.Duration(0)
	for _, d := range ds {
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < time.Millisecond || hi > time.Second || hi-lo < 900*time.Millisecond {
		t.Errorf("delays span [%v, %v], want about [1ms, 1s]", lo, hi)
	}
	again := timerDelays(p)
	for i := range ds {
		if ds[i] != again[i] {
			t.Fatalf("delays not deterministic at %d", i)
		}
	}
}

// TestErlangTimerDelaysMatch checks that the escript's LCG yields the same delays as Go's, so
// both arm the same timers.
func TestErlangTimerDelaysMatch(t *testing.T) {
	if _, err := exec.LookPath("escript"); err != nil {
		t.Skip("erlang: not installed")
	}
	script, err := erlangScriptPath()
	if err != nil {
		t.Fatal(err)
	}
	p := Params{N: 1000, MaxDelay: 1000 * time.Millisecond, Seed: 42}
	out, err := exec.Command("escript", script, "delays", "1000", "0", "0", "1000", "42").CombinedOutput()
	if err != nil {
		t.Fatalf("escript delays: %v: %s", err, out)
	}
	var got string
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "RESULT "); ok {
			got = parseKV(rest)["check"]
		}
	}
	var sum, weighted int64
	for i, d := range timerDelays(p) {
		ms := int64(d / time.Millisecond)
		sum += ms
		weighted += int64(i+1) * ms
	}
	if want := strconv.FormatInt(weighted, 10); got != want {
		t.Errorf("erlang delays checksum %q, want %s (sum %d)", got, want, sum)
	}
}

func TestParseErlangResult(t *testing.T) {
	s, err := parseErlangResult("otp=25 wall_ns=2500000 check=7 p99_late_ns=1500000 bytes_per_actor=2720.5")
	if err != nil {
		t.Fatal(err)
	}
	if s.Wall != 2500*time.Microsecond || s.Check != 7 || s.Extra["p99_late_ms"] != 1.5 || s.Extra["bytes_per_actor"] != 2720.5 {
		t.Errorf("parsed %+v", s)
	}
	if _, err := parseErlangResult("otp=25 check=7"); err == nil {
		t.Error("missing wall_ns accepted")
	}
}

// TestReport drives the reporting path on synthetic samples: ratios, files, well-formed SVG.
func TestReport(t *testing.T) {
	pp := workloadByName("pingpong")
	tm := workloadByName("timers")
	p := pp.Params(0.001, true)
	mk := func(ms ...float64) []Outcome {
		var os []Outcome
		for _, v := range ms {
			os = append(os, Outcome{Sample: Sample{Wall: time.Duration(v * 1e6), Check: pp.Expect(p),
				Extra: map[string]float64{"p99_late_ms": v / 10, "max_late_ms": v / 5}}})
		}
		return os
	}
	r := &Report{Runs: 3, Scale: 0.001, Env: environment(), Cells: []*Cell{
		{Workload: "pingpong", Impl: "goroutines", Params: p, Outcomes: mk(10, 12, 11)},
		{Workload: "pingpong", Impl: "protoactor", Params: p, Outcomes: mk(30, 33, 90)},
		{Workload: "pingpong", Impl: "erlang", Params: p, Outcomes: append(mk(20), Outcome{Err: "boom"})},
		{Workload: "timers", Impl: "goroutines", Params: tm.Params(0.001, true), Outcomes: mk(100)},
		{Workload: "timers", Impl: "protoactor", Params: tm.Params(0.001, true), Outcomes: mk(50)},
	}}
	r.summarize([]*Workload{pp, tm})
	if r.Failures != 1 {
		t.Errorf("failures = %d, want 1", r.Failures)
	}
	g, pa := r.Cells[0].Stats["wall_ms"], r.Cells[1].Stats["wall_ms"]
	if g.Median != 11 || g.Min != 10 || g.Max != 12 || pa.Median != 33 || pa.Ratio != 3 {
		t.Errorf("stats: goroutines %+v protoactor %+v", g, pa)
	}
	if want := 11e6 / float64(pp.Ops(p)); g.NsPerOp != want {
		t.Errorf("ns/op = %v, want %v", g.NsPerOp, want)
	}
	if e := r.Cells[2].Stats["wall_ms"]; e.N != 1 || e.Ratio != 20.0/11 {
		t.Errorf("erlang stat %+v (the failed sample must not count)", e)
	}
	var sb strings.Builder
	r.writeTable(&sb)
	for _, s := range []string{"3.00x", "Proto.Actor/goroutines", "p99 lateness", "1/2 ok"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, sb.String())
		}
	}
	dir := t.TempDir()
	if err := r.writeFiles(dir, []*Workload{pp, tm}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "results.csv", "benchmarks.md", "ratios.svg", "pingpong.svg", "timers.svg", "timers-p99-late-ms.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("missing %s: %v", f, err)
			continue
		}
		if strings.HasSuffix(f, ".svg") {
			d := xml.NewDecoder(strings.NewReader(string(b)))
			for {
				_, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Errorf("%s is not well-formed XML: %v", f, err)
					break
				}
			}
		}
	}
}

// Colony's other backends are compared with colony sample by sample
// within a round; a round where either sample failed is left out.
func TestPairedRatiosWithinARound(t *testing.T) {
	w := workloadByName("tcpecho1k")
	cpu := func(v ...float64) []Outcome {
		var os []Outcome
		for _, x := range v {
			if x < 0 {
				os = append(os, Outcome{Err: "boom"})
				continue
			}
			os = append(os, Outcome{Sample: Sample{Extra: map[string]float64{"cpu_ns_per_trip": x}}})
		}
		return os
	}
	base := &Cell{Workload: w.Name, Impl: "colony", Outcomes: cpu(10, 20, 10, -1)}
	uring := &Cell{Workload: w.Name, Impl: "colony-uring", Outcomes: cpu(9, 22, -1, 30)}
	got := pairedRatios(uring, base, "cpu_ns_per_trip")
	if want := []float64{0.9, 1.1}; !slices.Equal(got, want) {
		t.Fatalf("paired ratios %v, want %v (rounds 3 and 4 have a failed sample)", got, want)
	}
	r := &Report{Cells: []*Cell{base, uring}}
	var sb strings.Builder
	if !r.writePairedTable(&sb, true) || !strings.Contains(sb.String(), "| tcpecho1k | server CPU/round trip | Colony (io_uring) | 0.90x / 1.00x / 1.10x (2 pairs) |") {
		t.Fatalf("paired table:\n%s", sb.String())
	}
	if (&Report{Cells: []*Cell{uring}}).writePairedTable(&sb, false) {
		t.Fatal("a paired table without colony to pair with")
	}
}
