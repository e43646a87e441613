//go:build !nocolony

package main

import "testing"

// TestDistSmoke runs the dist workload's pairs at a tiny size (the Erlang pairs only where erl
// is installed) and fails on any error: the sink's count, every echo, every call's reply and
// every spawn's pid are checked.
func TestDistSmoke(t *testing.T) {
	env, err := startDistEnv(true)
	if err != nil {
		t.Fatal(err)
	}
	defer env.close()
	for _, note := range env.notes {
		t.Log(note)
	}
	for _, p := range env.pairs() {
		r := p.run(500, 50)
		if r.throughputErr != nil || r.latencyErr != nil || r.msgsPerSec <= 0 || r.p50 <= 0 ||
			r.calls.err != nil || r.calls.p50 <= 0 || r.calls.spawnSeq <= 0 || r.calls.spawnPar <= 0 {
			t.Errorf("%s: %+v", p.name, r)
		}
	}
}
