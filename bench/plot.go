// Plots: hand-written SVG bar charts, no external tools.
//
// ratios.svg: one group of horizontal bars per workload metric, one bar per implementation, the
// median ratio against goroutines on a log scale with the 1x line marked. <workload>.svg: the
// headline metric of one workload, a bar per implementation at the median with a min-max whisker.
package main

import (
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strings"
)

var implColor = map[string]string{
	"goroutines": "#7f7f7f", "colony": "#2ca02c", "protoactor": "#1f77b4", "erlang": "#d62728",
}

const svgFont = `font-family="sans-serif" font-size="12"`

func (r *Report) writePlots(dir string) error {
	if s := r.ratioSVG(); s != "" {
		if err := os.WriteFile(filepath.Join(dir, "ratios.svg"), []byte(s), 0o644); err != nil {
			return err
		}
	}
	order, byW := r.byWorkload()
	for _, name := range order {
		w := workloadByName(name)
		for i, m := range w.Metrics {
			if i > 1 {
				break // headline plus one (timers: p99 lateness; memory: spawn wall time is not plotted)
			}
			if name == "memory" && m.Key == metricWall.Key {
				continue
			}
			s := workloadSVG(w, m, byW[name])
			file := name + ".svg"
			if i > 0 {
				file = name + "-" + strings.ReplaceAll(m.Key, "_", "-") + ".svg"
			}
			if err := os.WriteFile(filepath.Join(dir, file), []byte(s), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Report) ratioSVG() string {
	others := r.ratioImpls()
	if len(others) == 0 {
		return ""
	}
	type row struct {
		label  string
		ratios []float64 // per others; 0 = none
	}
	var rows []row
	idx := map[string]int{}
	r.rows(func(w *Workload, m Metric, c *Cell, st *Stat) {
		key := w.Name + " " + m.Label
		i, ok := idx[key]
		if !ok {
			i = len(rows)
			idx[key] = i
			rows = append(rows, row{label: key, ratios: make([]float64, len(others))})
		}
		if j := indexOf(others, c.Impl); j >= 0 && st != nil {
			rows[i].ratios[j] = st.Ratio
		}
	})
	lo, hi := 1.0, 1.0
	for _, rw := range rows {
		for _, v := range rw.ratios {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	lmin := math.Floor(math.Log10(lo))
	lmax := math.Ceil(math.Log10(hi))
	if lmax == lmin {
		lmax++
	}
	const left, right, top, barH, gap, plotW = 170.0, 60.0, 40.0, 12.0, 10.0, 520.0
	groupH := barH*float64(len(others)) + gap
	height := top + groupH*float64(len(rows)) + 50
	width := left + plotW + right
	x := func(v float64) float64 { return left + (math.Log10(v)-lmin)/(lmax-lmin)*plotW }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" %s>`+"\n", width, height, svgFont)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="14" font-weight="bold">Median time (or metric) relative to plain goroutines — lower is better, log scale</text>`+"\n", 10.0)
	for e := lmin; e <= lmax; e++ {
		for _, mul := range []float64{1, 2, 5} {
			v := mul * math.Pow(10, e)
			if math.Log10(v) > lmax+1e-9 {
				break
			}
			xx := x(v)
			stroke := "#e0e0e0"
			if v == 1 {
				stroke = "#000"
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="%s"/>`+"\n", xx, top-5, xx, height-40, stroke)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%sx</text>`+"\n", xx, height-25, trimFloat(v))
		}
	}
	for i, rw := range rows {
		y0 := top + float64(i)*groupH
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, y0+groupH/2, html.EscapeString(rw.label))
		for j, v := range rw.ratios {
			y := y0 + float64(j)*barH
			if v <= 0 {
				continue
			}
			x0, x1 := x(1), x(v)
			if x1 < x0 {
				x0, x1 = x1, x0
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
				x0, y, math.Max(x1-x0, 1), barH-2, implColor[others[j]], html.EscapeString(rw.label), others[j], fmtRatio(v))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10">%s</text>`+"\n", math.Max(x(v), x(1))+3, y+barH-3, fmtRatio(v))
		}
	}
	for j, n := range others { // legend
		lx := left + float64(j)*130
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f">%s/goroutines</text>`+"\n",
			lx, height-15, implColor[n], lx+16, height-4, implTitle[n])
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func workloadSVG(w *Workload, m Metric, cells []*Cell) string {
	const left, top, barW, gap, plotH = 70.0, 40.0, 70.0, 30.0, 220.0
	width := left + (barW+gap)*float64(len(cells)) + gap
	height := top + plotH + 50
	hi := 0.0
	for _, c := range cells {
		if st := c.Stats[m.Key]; st != nil {
			hi = math.Max(hi, st.Max)
		}
	}
	if hi == 0 {
		hi = 1
	}
	tick := niceTick(hi / 4)
	hi = math.Ceil(hi/tick) * tick
	y := func(v float64) float64 { return top + plotH - v/hi*plotH }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" %s>`+"\n", math.Max(width, 360), height, svgFont)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">%s — %s (median, min–max)</text>`+"\n", w.Name, html.EscapeString(m.Label))
	for v := 0.0; v <= hi+tick/2; v += tick {
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", left, y(v), width, y(v))
		label := "0"
		if v > 0 {
			label = fmtMetric(m, v)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-5, y(v)+4, label)
	}
	for i, c := range cells {
		x := left + gap + float64(i)*(barW+gap)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x+barW/2, top+plotH+18, implTitle[c.Impl])
		st := c.Stats[m.Key]
		if st == nil {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" fill="#999">n/a</text>`+"\n", x+barW/2, top+plotH-5)
			continue
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.0f" height="%.1f" fill="%s"/>`+"\n",
			x, y(st.Median), barW, top+plotH-y(st.Median), implColor[c.Impl])
		cx := x + barW/2
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", cx, y(st.Min), cx, y(st.Max))
		for _, v := range []float64{st.Min, st.Max} {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", cx-8, y(v), cx+8, y(v))
		}
		label := fmtMetric(m, st.Median)
		if st.Ratio != 0 && c.Impl != "goroutines" {
			label += " (" + fmtRatio(st.Ratio) + ")"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" font-size="10">%s</text>`+"\n", cx, top+plotH+34, label)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceTick rounds v up to 1, 2 or 5 times a power of ten.
func niceTick(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
