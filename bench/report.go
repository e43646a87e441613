// Reporting: statistics over samples, the console table, JSON, CSV and the markdown table.
package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Cell is every sample of one workload by one implementation.
type Cell struct {
	Workload string
	Impl     string
	Params   Params
	Outcomes []Outcome
	Skipped  string           `json:",omitempty"` // why the remaining samples did not run
	Stats    map[string]*Stat `json:",omitempty"` // by Metric.Key, over the samples that succeeded
}

// Stat summarises one metric over the successful samples of a cell.
type Stat struct {
	N      int
	Min    float64
	Median float64
	Max    float64
	// Ratio is Median divided by the goroutines median of the same workload and metric (0 when
	// there is none). Lower is better for every metric.
	Ratio float64 `json:",omitempty"`
	// NsPerOp is the median wall time divided by the workload's operation count (wall only).
	NsPerOp float64 `json:",omitempty"`
}

// Report is one invocation of the suite.
type Report struct {
	Started  time.Time
	Finished time.Time
	Scale    float64
	Runs     int
	Quick    bool
	Env      map[string]string
	Notes    []string `json:",omitempty"`
	Cells    []*Cell
	Failures int
}

func metricValue(s Sample, key string) (float64, bool) {
	if key == metricWall.Key {
		return float64(s.Wall) / 1e6, true
	}
	v, ok := s.Extra[key]
	return v, ok
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (r *Report) summarize(ws []*Workload) {
	base := map[string]*Cell{}
	for _, c := range r.Cells {
		for _, o := range c.Outcomes {
			if o.Err != "" {
				r.Failures++
			}
		}
		if c.Impl == "goroutines" {
			base[c.Workload] = c
		}
	}
	for _, c := range r.Cells {
		w := workloadByName(c.Workload)
		c.Stats = map[string]*Stat{}
		for _, m := range w.Metrics {
			var vals []float64
			for _, o := range c.Outcomes {
				if o.Err != "" {
					continue
				}
				if v, ok := metricValue(o.Sample, m.Key); ok {
					vals = append(vals, v)
				}
			}
			if len(vals) == 0 {
				continue
			}
			st := &Stat{N: len(vals), Min: slices.Min(vals), Median: median(vals), Max: slices.Max(vals)}
			if m.Key == metricWall.Key {
				if ops := w.Ops(c.Params); ops > 0 {
					st.NsPerOp = st.Median * 1e6 / float64(ops)
				}
			}
			c.Stats[m.Key] = st
		}
	}
	for _, c := range r.Cells {
		b := base[c.Workload]
		if b == nil {
			continue
		}
		for k, st := range c.Stats {
			if bs := b.Stats[k]; bs != nil && bs.Median > 0 {
				st.Ratio = st.Median / bs.Median
			}
		}
	}
}

// fmtMetric prints a metric value in its natural unit.
func fmtMetric(m Metric, v float64) string {
	switch m.Unit {
	case "ms":
		d := time.Duration(v * 1e6)
		switch {
		case d >= 10*time.Second:
			return fmt.Sprintf("%.1fs", d.Seconds())
		case d >= time.Second:
			return fmt.Sprintf("%.2fs", d.Seconds())
		case d >= 10*time.Millisecond:
			return fmt.Sprintf("%.0fms", v)
		case d >= time.Millisecond:
			return fmt.Sprintf("%.1fms", v)
		default:
			return fmt.Sprintf("%.0fµs", v*1e3)
		}
	case "B":
		return fmt.Sprintf("%.0f B", v)
	case "ns":
		return fmt.Sprintf("%.0f ns", v)
	case "MiB":
		return fmt.Sprintf("%.1f MiB", v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func fmtRatio(r float64) string {
	if r == 0 {
		return "-"
	}
	if r >= 10 {
		return fmt.Sprintf("%.1fx", r)
	}
	return fmt.Sprintf("%.2fx", r)
}

func fmtNsOp(st *Stat, w *Workload) string {
	if st == nil || st.NsPerOp == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f ns/%s", st.NsPerOp, w.OpName)
}

func fmtSampleBrief(w *Workload, o Outcome) string {
	if o.Err != "" && !o.Wrong {
		return "-"
	}
	var parts []string
	for _, m := range w.Metrics {
		if v, ok := metricValue(o.Sample, m.Key); ok {
			parts = append(parts, m.Label+" "+fmtMetric(m, v))
		}
	}
	return strings.Join(parts, ", ")
}

// rows yields, in report order, each (workload, metric, cell) with its stat (nil when none).
// byWorkload groups the cells by workload, workloads in the order they ran.
func (r *Report) byWorkload() (order []string, byW map[string][]*Cell) {
	byW = map[string][]*Cell{}
	for _, c := range r.Cells {
		if byW[c.Workload] == nil {
			order = append(order, c.Workload)
		}
		byW[c.Workload] = append(byW[c.Workload], c)
	}
	return order, byW
}

func (r *Report) rows(yield func(w *Workload, m Metric, c *Cell, st *Stat)) {
	order, byW := r.byWorkload()
	for _, name := range order {
		w := workloadByName(name)
		for _, m := range w.Metrics {
			for _, c := range byW[name] {
				yield(w, m, c, c.Stats[m.Key])
			}
		}
	}
}

func cellNote(c *Cell) string {
	ok := 0
	for _, o := range c.Outcomes {
		if o.Err == "" {
			ok++
		}
	}
	note := fmt.Sprintf("%d/%d ok", ok, len(c.Outcomes))
	for _, o := range c.Outcomes {
		if o.Wrong {
			note += " WRONG"
			break
		}
	}
	if c.Skipped != "" {
		note += "; " + c.Skipped
	}
	return note
}

func (r *Report) writeTable(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tmetric\timplementation\tmin\tmedian\tmax\tper op\tvs goroutines\tsamples\t")
	last := ""
	r.rows(func(w *Workload, m Metric, c *Cell, st *Stat) {
		key := w.Name + "/" + m.Key
		if key != last && last != "" {
			fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t")
		}
		last = key
		if st == nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t\t-\t%s\t\n", w.Name, m.Label, c.Impl, cellNote(c))
			return
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", w.Name, m.Label, c.Impl,
			fmtMetric(m, st.Min), fmtMetric(m, st.Median), fmtMetric(m, st.Max), fmtNsOp(st, w),
			fmtRatio(st.Ratio), cellNote(c))
	})
	tw.Flush()
	fmt.Fprintln(out)
	r.writeRatioTable(out, false)
	r.writePairedTable(out, false)
	for _, n := range r.Notes {
		fmt.Fprintln(out, n)
	}
}

// ratioImpls are the non-baseline implementations present in the report, in column order.
func (r *Report) ratioImpls() []string {
	have := map[string]bool{}
	for _, c := range r.Cells {
		have[c.Impl] = true
	}
	var s []string
	for _, n := range implOrder {
		if n != "goroutines" && have[n] {
			s = append(s, n)
		}
	}
	return s
}

var implTitle = map[string]string{
	"goroutines": "goroutines", "colony": "Colony", "protoactor": "Proto.Actor", "erlang": "Erlang",
	"colony-uring": "Colony (io_uring)", "colony-portable": "Colony (portable)",
	"colony-once":  "Colony (active-once)",
	"goroutines64": "goroutines64",
}

// writeRatioTable prints median ratios against goroutines, one row per workload metric.
func (r *Report) writeRatioTable(out io.Writer, markdown bool) {
	others := r.ratioImpls()
	if len(others) == 0 {
		return
	}
	head := []string{"workload", "metric", "goroutines (median)"}
	for _, n := range others {
		head = append(head, implTitle[n]+"/goroutines")
	}
	// With the 64-slot baseline in the run, Colony against it too (issue 21's goal).
	vs64 := slices.Contains(others, "goroutines64") && slices.Contains(others, "colony")
	if vs64 {
		head = append(head, "Colony/goroutines64")
	}
	med64, medCol := map[string]float64{}, map[string]float64{}
	var lines [][]string
	cur := map[string][]string{}
	var order []string
	r.rows(func(w *Workload, m Metric, c *Cell, st *Stat) {
		key := w.Name + "\x00" + m.Key
		row, ok := cur[key]
		if !ok {
			row = make([]string, len(head))
			row[0], row[1] = w.Name, m.Label
			for i := 2; i < len(row); i++ {
				row[i] = "-"
			}
			order = append(order, key)
		}
		if c.Impl == "goroutines" && st != nil {
			row[2] = fmtMetric(m, st.Median)
		}
		if i := slices.Index(others, c.Impl); i >= 0 && st != nil && st.Ratio != 0 {
			row[3+i] = fmtRatio(st.Ratio)
		}
		if st != nil && c.Impl == "goroutines64" {
			med64[key] = st.Median
		}
		if st != nil && c.Impl == "colony" {
			medCol[key] = st.Median
		}
		cur[key] = row
	})
	for _, k := range order {
		if vs64 && med64[k] > 0 && medCol[k] > 0 {
			cur[k][len(head)-1] = fmtRatio(medCol[k] / med64[k])
		}
		lines = append(lines, cur[k])
	}
	if markdown {
		fmt.Fprintln(out, "| "+strings.Join(head, " | ")+" |")
		fmt.Fprintln(out, "|"+strings.Repeat(" --- |", len(head)))
		for _, l := range lines {
			fmt.Fprintln(out, "| "+strings.Join(l, " | ")+" |")
		}
		return
	}
	fmt.Fprintln(out, "Median ratios against plain goroutines (lower is better; 1.00x = as fast as goroutines):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, l := range lines {
		fmt.Fprintln(tw, strings.Join(l, "\t")+"\t")
	}
	tw.Flush()
}

// pairedRatios divides each successful sample of c by the sample of base
// from the same round (runs are interleaved: sample i of every
// implementation ran in round i), for metric key; sorted.
func pairedRatios(c, base *Cell, key string) []float64 {
	var rs []float64
	for i := 0; i < len(c.Outcomes) && i < len(base.Outcomes); i++ {
		o, b := c.Outcomes[i], base.Outcomes[i]
		if o.Err != "" || b.Err != "" {
			continue
		}
		v, ok1 := metricValue(o.Sample, key)
		bv, ok2 := metricValue(b.Sample, key)
		if ok1 && ok2 && bv > 0 {
			rs = append(rs, v/bv)
		}
	}
	slices.Sort(rs)
	return rs
}

// writePairedTable prints, for each Colony variant (colony-once,
// colony-uring, colony-portable) run beside colony, its ratio to colony sample by
// sample within a round: min / median / max. On a machine whose speed
// drifts between rounds, the pairs cancel the drift that the medians of
// the two cells keep. It says whether it printed anything.
func (r *Report) writePairedTable(out io.Writer, markdown bool) bool {
	type line struct{ workload, metric, impl, ratios string }
	var lines []line
	order, byW := r.byWorkload()
	for _, name := range order {
		var base *Cell
		for _, c := range byW[name] {
			if c.Impl == "colony" {
				base = c
			}
		}
		if base == nil {
			continue
		}
		w := workloadByName(name)
		for _, m := range w.Metrics {
			for _, c := range byW[name] {
				if !strings.HasPrefix(c.Impl, "colony-") {
					continue
				}
				if rs := pairedRatios(c, base, m.Key); len(rs) > 0 {
					lines = append(lines, line{w.Name, m.Label, implTitle[c.Impl],
						fmt.Sprintf("%s / %s / %s (%d pairs)", fmtRatio(rs[0]), fmtRatio(median(rs)), fmtRatio(rs[len(rs)-1]), len(rs))})
				}
			}
		}
	}
	if len(lines) == 0 {
		return false
	}
	if markdown {
		fmt.Fprintln(out, "| workload | metric | implementation | /Colony, paired within a round: min / median / max |")
		fmt.Fprintln(out, "| --- | --- | --- | --- |")
		for _, l := range lines {
			fmt.Fprintf(out, "| %s | %s | %s | %s |\n", l.workload, l.metric, l.impl, l.ratios)
		}
		return true
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Colony's other variants against Colony (epoll, TryRead), sample by sample within a round (lower is better):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tmetric\timplementation\tmin / median / max\t")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", l.workload, l.metric, l.impl, l.ratios)
	}
	tw.Flush()
	return true
}

func (r *Report) writeMarkdown(out io.Writer) {
	fmt.Fprintf(out, "Measured %s on %s (%s CPUs, GOMAXPROCS %s), %s; Proto.Actor %s; Erlang/OTP %s. "+
		"Scale %g, %d run(s) per implementation, interleaved. Generated by `cd bench && go run .`.\n\n",
		r.Started.Format("2006-01-02"), r.Env["cpu"], r.Env["cpus"], r.Env["gomaxprocs"], r.Env["go"],
		r.Env["protoactor"], r.Env["erlang"], r.Scale, r.Runs)
	r.writeRatioTable(out, true)
	fmt.Fprintln(out)
	if r.writePairedTable(out, true) {
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, "| workload | metric | implementation | min | median | max | per op | vs goroutines | samples |")
	fmt.Fprintln(out, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
	r.rows(func(w *Workload, m Metric, c *Cell, st *Stat) {
		if st == nil {
			fmt.Fprintf(out, "| %s | %s | %s | - | - | - | | - | %s |\n", w.Name, m.Label, c.Impl, cellNote(c))
			return
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w.Name, m.Label, c.Impl,
			fmtMetric(m, st.Min), fmtMetric(m, st.Median), fmtMetric(m, st.Max), fmtNsOp(st, w),
			fmtRatio(st.Ratio), cellNote(c))
	})
	if len(r.Notes) > 0 {
		fmt.Fprintln(out)
		for _, n := range r.Notes {
			fmt.Fprintf(out, "- %s\n", n)
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Workloads:")
	fmt.Fprintln(out)
	seen := map[string]bool{}
	for _, c := range r.Cells {
		if seen[c.Workload] {
			continue
		}
		seen[c.Workload] = true
		w := workloadByName(c.Workload)
		fmt.Fprintf(out, "- **%s**: %s (%s).\n", w.Name, w.Desc, compactParams(c.Params))
	}
}

func (r *Report) writeCSV(out io.Writer) error {
	cw := csv.NewWriter(out)
	_ = cw.Write([]string{"workload", "metric", "unit", "impl", "params", "ok", "samples", "min", "median", "max", "ns_per_op", "ratio_vs_goroutines", "note"})
	r.rows(func(w *Workload, m Metric, c *Cell, st *Stat) {
		rec := []string{w.Name, m.Key, m.Unit, c.Impl, compactParams(c.Params), "0", strconv.Itoa(len(c.Outcomes)), "", "", "", "", "", cellNote(c)}
		if st != nil {
			f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
			rec[5] = strconv.Itoa(st.N)
			rec[7], rec[8], rec[9] = f(st.Min), f(st.Median), f(st.Max)
			if st.NsPerOp != 0 {
				rec[10] = f(math.Round(st.NsPerOp*10) / 10)
			}
			if st.Ratio != 0 {
				rec[11] = f(math.Round(st.Ratio*1000) / 1000)
			}
		}
		_ = cw.Write(rec)
	})
	cw.Flush()
	return cw.Error()
}

func (r *Report) writeFiles(dir string, ws []*Workload) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	j, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(j, '\n'), 0o644); err != nil {
		return err
	}
	var sb strings.Builder
	if err := r.writeCSV(&sb); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), []byte(sb.String()), 0o644); err != nil {
		return err
	}
	sb.Reset()
	r.writeMarkdown(&sb)
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.md"), []byte(sb.String()), 0o644); err != nil {
		return err
	}
	return r.writePlots(dir)
}

// environment describes the machine and the versions measured.
func environment() map[string]string {
	env := map[string]string{
		"go":         runtime.Version(),
		"os":         runtime.GOOS + "/" + runtime.GOARCH,
		"cpus":       strconv.Itoa(runtime.NumCPU()),
		"gomaxprocs": strconv.Itoa(runtime.GOMAXPROCS(0)),
		"cpu":        cpuModel(),
		"protoactor": "?",
		"erlang":     erlangVersion(),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/asynkron/protoactor-go" {
				env["protoactor"] = d.Version
			}
		}
	}
	return env
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
