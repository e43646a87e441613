// Package metrics reads a Colony actor.System's own counters as metric
// families named and typed as Prometheus asks (colony_*, counters ending
// in _total, seconds, no per-pid label), and serves them in Prometheus's
// text exposition format with the standard library alone.
//
//	m := metrics.New(sys)
//	defer m.Close()
//	mux.Handle("/metrics", m)
//
// It is the one definition of Colony's metrics: the Prometheus collector
// (module observer/prom, prom.NewCollector) hands the same families to
// client_golang, and its tests check that this package's text parses to
// what the collector exports. Use this package to serve /metrics without
// client_golang in one's module (the demo, cmd/actordemo -observe, does);
// use observer/prom to add the metrics to a client_golang registry beside
// one's own. docs/observability.md lists every metric.
//
// No metric has a per-pid label: actors come and go by the million.
// Supervisors are labelled by their registered name (Spec.Name), and
// schedulers by their index; both are few and stable.
//
// Cost. New turns on the System's sampling (actor.System.Observe: about
// one activation and one send in 64 timed) and watches its reports (one
// call per report). A scrape reads the counters, O(schedulers), and scans
// every actor for the mailbox-length histogram, O(actors), at most once
// per MinScanInterval (default 5 s; a million actors take tens of
// milliseconds). Close turns both off.
package metrics
