//go:build !unix

package dist

import (
	"runtime/metrics"
	"time"
)

// cpuTime is the Go runtime's estimate of the CPU time the process has
// used: Go code, the garbage collector and the scavenger.
func cpuTime() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/user:cpu-seconds"}, {Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/scavenge/total:cpu-seconds"}}
	metrics.Read(s)
	var sec float64
	for _, x := range s {
		if x.Value.Kind() == metrics.KindFloat64 {
			sec += x.Value.Float64()
		}
	}
	return time.Duration(sec * float64(time.Second))
}
