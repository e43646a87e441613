// Package erlenv is the environment the tests start Erlang/OTP in: every
// escript and erl node of the differential and distribution tests gets it.
//
// The one setting is the schedulers' idle policy. A BEAM scheduler that
// runs out of work spins for a while before it sleeps (+sbwt, busy wait
// threshold; the dirty schedulers likewise). A test's Erlang side is mostly
// idle, waiting for the other side or for a timer, so its schedulers spin
// again and again; on a machine whose cores are all busy, as a test
// machine's are, the spinning competes with the test's own work and the
// emulator's boot, and each escript took several times its quiet wall time.
// With busy waiting off they sleep at once. Measured on the 2-core machine
// with a CPU hog on each core: an escript of the link scenarios took 1.4,
// 4.2 and 2.9 s by default, 0.5, 0.7 and 1.0 s without busy waiting (its
// CPU time 0.2 s either way); fewer schedulers alone (+S 1) did not help.
// Busy waiting is a latency policy: no Erlang semantics, and so no trace,
// depends on it.
package erlenv

import (
	"os"
	"strings"
)

// Flags are the emulator flags the tests add to ERL_FLAGS.
const Flags = "+sbwt none +sbwtdcpu none +sbwtdio none"

// Env returns the process's environment with Flags added to ERL_FLAGS
// (after the user's own, which erl reads first) and extra appended.
func Env(extra ...string) []string {
	env := os.Environ()
	out := make([]string, 0, len(env)+1+len(extra))
	flags := Flags
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "ERL_FLAGS="); ok {
			if v = strings.TrimSpace(v); v != "" {
				flags = v + " " + Flags
			}
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "ERL_FLAGS="+flags)
	return append(out, extra...)
}
