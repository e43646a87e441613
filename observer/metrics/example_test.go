package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/observer/metrics"
)

// Serve a System's metrics without client_golang: mux.Handle("/metrics",
// m) answers what WriteText writes. Here, the types of the per-scheduler
// time counters, whose rate is the schedulers' utilisation.
func Example() {
	sys, _ := actor.Start(actor.Config{Schedulers: 2})
	defer sys.Shutdown(context.Background())
	m := metrics.New(sys, metrics.MinScanInterval(-1))
	defer m.Close()

	var text strings.Builder
	m.WriteText(&text)
	sc := bufio.NewScanner(strings.NewReader(text.String()))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "# TYPE colony_scheduler_") && strings.HasSuffix(line, "seconds_total counter") {
			fmt.Println(line)
		}
	}
	// Output:
	// # TYPE colony_scheduler_busy_seconds_total counter
	// # TYPE colony_scheduler_parked_seconds_total counter
}
