//go:build !race

package actor_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestMailboxSoak: 100,000 long-lived actors handle 50M messages, half
// from plain goroutines and half from actors, in rounds of 10 per actor; the
// live heap after the last round may exceed the heap after the first by at
// most 16 MiB (a third of a byte a message: the unfixed mailbox kept ~24 B
// a message: +915 MiB here, 18 B a message). About 30 s on two cores;
// skipped with -short.
func TestMailboxSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: 50M messages")
	}
	const (
		actors   = 100_000
		perRound = 10 // messages per actor per round
		half     = 25_000_000
		bound    = 16 << 20
	)
	sys := start(t, actor.Config{MaxActors: actors + 1000})
	began := time.Now()
	ll := spawnLongLived(t, sys, actors)
	start := liveHeap()
	b1, a1 := retentionRun(t, ll, goroutineFeeder(t, ll, 2), perRound, half)
	_, a2 := retentionRun(t, ll, actorFeeder(t, ll, 100), perRound, half)
	handled := ll.handled.Load()
	growth := int64(a2) - int64(b1)
	t.Logf("%d actors, %d messages in %v: live heap %.1f MiB after the spawns, %.1f MiB after the first round, %.1f MiB after the goroutines' %d rounds, %.1f MiB after the actors' (%+.2f MiB since the first round, %.3f B/message)",
		actors, handled, time.Since(began).Round(time.Second), mib(start), mib(b1), mib(a1), half/(perRound*actors), mib(a2),
		float64(growth)/(1<<20), float64(growth)/float64(handled))
	if growth > bound {
		t.Fatalf("live heap grew by %d bytes over %d messages; bound %d", growth, handled, bound)
	}
	if handled < 2*half {
		t.Fatalf("%d messages handled, want at least %d", handled, 2*half)
	}
	for _, pid := range ll.pids {
		if !sys.Alive(pid) {
			t.Fatalf("%v died", pid)
		}
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
