// Package prom exports a Colony actor.System's own counters to Prometheus:
// a prometheus.Collector over the metric families of package
// observer/metrics (Stats, Observation and the System's reports),
// following Prometheus naming (docs/observability.md lists every metric).
//
//	c := prom.NewCollector(sys)
//	defer c.Close()
//	prometheus.MustRegister(c)
//
// No metric has a per-pid label: actors come and go by the million.
// Supervisors are labelled by their registered name (Spec.Name), and
// schedulers by their index; both are few and stable.
//
// Cost. NewCollector turns on the System's sampling (actor.System.Observe:
// about one activation and one send in 64 timed) and watches its reports
// (one call per report). A scrape reads the counters, O(schedulers), and
// scans every actor for the mailbox-length histogram, O(actors), at most
// once per MinScanInterval (default 5 s; a million actors take tens of
// milliseconds). Close turns both off.
package prom

import (
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/observer/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// Option configures NewCollector.
type Option func(*options)

type options struct {
	labels prometheus.Labels
	set    []metrics.Option
}

// ConstLabels adds labels to every metric: to tell two Systems of one
// process apart.
func ConstLabels(l prometheus.Labels) Option {
	return func(o *options) { o.labels = l; o.set = append(o.set, metrics.ConstLabels(l)) }
}

// MinScanInterval sets how stale the mailbox-length histogram may be: a
// scrape scans the actors only if the last scan is older (default 5 s).
// Zero scans at every scrape; a negative interval never scans, and the
// histogram is left out.
func MinScanInterval(d time.Duration) Option {
	return func(o *options) { o.set = append(o.set, metrics.MinScanInterval(d)) }
}

// Collector is a prometheus.Collector over one System. Make it with
// NewCollector; it is safe for concurrent scrapes.
type Collector struct {
	set   *metrics.Set
	descs map[*metrics.Desc]*prometheus.Desc // immutable after NewCollector
}

// NewCollector returns a collector over sys. It turns sys's sampling on
// and watches its reports until Close.
func NewCollector(sys *actor.System, opts ...Option) *Collector {
	var o options
	for _, f := range opts {
		f(&o)
	}
	c := &Collector{set: metrics.New(sys, o.set...), descs: map[*metrics.Desc]*prometheus.Desc{}}
	for _, d := range c.set.Descs() {
		c.descs[d] = prometheus.NewDesc(d.Name, d.Help, d.Labels, o.labels)
	}
	return c
}

// Close stops the sampling and the report watching NewCollector started.
// Counters from reports keep their values; it is idempotent.
func (c *Collector) Close() { c.set.Close() }

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.set.Descs() {
		ch <- c.descs[d]
	}
}

// Collect reads the counters and sends the metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, f := range c.set.Gather() {
		desc := c.descs[f.Desc]
		for _, s := range f.Samples {
			switch f.Desc.Kind {
			case metrics.Counter:
				ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, s.Value, s.LabelValues...)
			case metrics.Gauge:
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, s.Value, s.LabelValues...)
			case metrics.Histogram:
				buckets := make(map[float64]uint64, len(s.Buckets))
				for _, b := range s.Buckets {
					buckets[b.UpperBound] = b.Count
				}
				ch <- prometheus.MustNewConstHistogram(desc, s.Count, s.Sum, buckets, s.LabelValues...)
			}
		}
	}
}
