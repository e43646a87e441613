// Command bench runs Colony's benchmark suite: Savina-style workloads measured side by side for
// plain goroutines, Colony, Proto.Actor Go and Erlang/OTP, in one run on one machine.
//
//	cd bench && go run .                       # the full suite (about ten minutes on 2 cores)
//	go run . -quick                            # a smoke run in seconds
//	go run . -runs 5 -only pingpong,spawn -scale 0.5 -impls goroutines,protoactor
//	go run . dist -runs 5                      # Erlang distribution: Colony and Erlang nodes
//
// It prints a table (min/median/max per implementation, ratio against goroutines) and writes
// results.json, results.csv, benchmarks.md and SVG charts into -out (default out/).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == tcpClientFlag { // the tcpecho load generator
		os.Exit(tcpClientMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "dist" { // the distribution workload (dist.go)
		os.Exit(distMain(os.Args[2:]))
	}
	os.Exit(run())
}

func run() int {
	var (
		runs    = flag.Int("runs", 3, "samples per workload and implementation")
		only    = flag.String("only", "", "comma-separated workloads to run (default all): "+strings.Join(workloadNames(), ","))
		implsF  = flag.String("impls", "", "comma-separated implementations (default all): "+strings.Join(implOrder, ","))
		scale   = flag.Float64("scale", 1.0, "multiplies every workload's size")
		quick   = flag.Bool("quick", false, "smoke run: -scale 0.01 -runs 1 and short timers, unless set explicitly")
		outDir  = flag.String("out", "out", "directory for results.json, results.csv, benchmarks.md and SVG charts")
		timeout = flag.Duration("timeout", 3*time.Minute, "limit for one sample")
		list    = flag.Bool("list", false, "list the workloads and their sizes at -scale, then exit")
		child   = flag.String("child", "", "internal: run one sample of this workload in this process")
		implF   = flag.String("impl", "", "internal: with -child, the implementation")
		params  = flag.String("params", "", "internal: with -child, the Params as JSON")
	)
	flag.Parse()
	if *child != "" {
		return childMain(*child, *implF, *params)
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["scale"] {
			*scale = 0.01
		}
		if !set["runs"] {
			*runs = 1
		}
	}
	if *runs < 1 || *scale <= 0 {
		fmt.Fprintln(os.Stderr, "bench: -runs must be >= 1 and -scale > 0")
		return 2
	}
	ws, err := selectWorkloads(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	if *list {
		for _, w := range ws {
			fmt.Printf("%-11s %-70s %+v\n", w.Name, w.Desc, w.Params(*scale, *quick))
		}
		return 0
	}
	names, err := selectImpls(*implsF)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}

	rep := &Report{
		Started: time.Now().UTC(), Scale: *scale, Runs: *runs, Quick: *quick,
		Env: environment(),
	}
	var active []*Impl
	for _, n := range names {
		im := impls[n]
		if im.Unavailable != nil {
			if why := im.Unavailable(); why != "" {
				fmt.Fprintf(os.Stderr, "%s\n", why)
				rep.Notes = append(rep.Notes, why)
				continue
			}
		}
		active = append(active, im)
	}
	fmt.Fprintf(os.Stderr, "bench: %s, GOMAXPROCS=%d, scale %g, %d run(s), implementations: %s\n",
		runtime.Version(), runtime.GOMAXPROCS(0), *scale, *runs, implNames(active))

	for _, w := range ws {
		p := w.Params(*scale, *quick)
		cells := map[string]*Cell{}
		for _, im := range active {
			c := &Cell{Workload: w.Name, Impl: im.Name, Params: p}
			if im.Runs[w.Name] == nil {
				c.Skipped = "not implemented"
			}
			cells[im.Name] = c
			rep.Cells = append(rep.Cells, c)
		}
		fmt.Fprintf(os.Stderr, "== %s: %s %+v\n", w.Name, w.Desc, compactParams(p))
		for r := 1; r <= *runs; r++ { // interleaved: run r of every implementation, then r+1
			for _, im := range active {
				c := cells[im.Name]
				if c.Skipped != "" {
					continue
				}
				o := runSample(w, im, p, *timeout)
				c.Outcomes = append(c.Outcomes, o)
				if o.Note != "" && !slices.Contains(rep.Notes, o.Note) {
					rep.Notes = append(rep.Notes, o.Note)
				}
				status := "ok"
				if o.Err != "" {
					status = o.Err
				}
				fmt.Fprintf(os.Stderr, "   %-10s run %d/%d: %s  %s\n", im.Name, r, *runs, fmtSampleBrief(w, o), status)
				if o.Err != "" && !o.Wrong {
					c.Skipped = "failed: " + o.Err
				}
			}
		}
	}
	rep.Finished = time.Now().UTC()
	rep.summarize(ws)

	fmt.Println()
	rep.writeTable(os.Stdout)
	if err := rep.writeFiles(*outDir, ws); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s/{results.json,results.csv,benchmarks.md,*.svg} in %v\n",
		*outDir, rep.Finished.Sub(rep.Started).Round(time.Second))
	if rep.Failures > 0 {
		fmt.Fprintf(os.Stderr, "bench: %d sample(s) failed or were WRONG\n", rep.Failures)
		return 1
	}
	return 0
}

func workloadNames() []string {
	var s []string
	for _, w := range workloads {
		s = append(s, w.Name)
	}
	return s
}

func selectWorkloads(only string) ([]*Workload, error) {
	if only == "" {
		return workloads, nil
	}
	var ws []*Workload
	for _, n := range strings.Split(only, ",") {
		w := workloadByName(strings.TrimSpace(n))
		if w == nil {
			return nil, fmt.Errorf("unknown workload %q (have %s)", n, strings.Join(workloadNames(), ","))
		}
		ws = append(ws, w)
	}
	return ws, nil
}

func selectImpls(s string) ([]string, error) {
	if s == "" {
		var all []string
		for _, n := range implOrder {
			if impls[n] != nil {
				all = append(all, n)
			}
		}
		return all, nil
	}
	var names []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if impls[n] == nil {
			return nil, fmt.Errorf("unknown implementation %q (have %s)", n, strings.Join(implOrder, ","))
		}
		names = append(names, n)
	}
	return names, nil
}

func implNames(is []*Impl) string {
	var s []string
	for _, im := range is {
		s = append(s, im.Name)
	}
	return strings.Join(s, ", ")
}

// compactParams drops the zero fields of p for printing.
func compactParams(p Params) string {
	var s []string
	if p.N != 0 {
		s = append(s, fmt.Sprintf("N=%d", p.N))
	}
	if p.Actors != 0 {
		s = append(s, fmt.Sprintf("actors=%d", p.Actors))
	}
	if p.Depth != 0 {
		s = append(s, fmt.Sprintf("depth=%d (%d leaves)", p.Depth, pow10(p.Depth)))
	}
	if p.MaxDelay != 0 {
		s = append(s, fmt.Sprintf("delays=%v..%v", p.Base+time.Millisecond, p.Base+p.MaxDelay))
	}
	if p.Window != 0 {
		s = append(s, fmt.Sprintf("window=%v (+%v warm-up)", p.Window, p.Window/3))
	}
	return strings.Join(s, " ")
}
