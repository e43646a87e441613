package actor_test

// Costs of a Pid on the paths that compare, hash and intern it: map
// lookups keyed by local and remote pids, ==, RemotePid for a node already
// known, and Remote (what encoding a remote pid asks).

import (
	"testing"

	"github.com/colonyrt/colony/actor"
)

func benchPids(b *testing.B, remote bool) []actor.Pid {
	b.Helper()
	pids := make([]actor.Pid, 1024)
	for i := range pids {
		if remote {
			p, err := actor.RemotePid(actor.RemoteID{Node: "bench@127.0.0.1", Creation: uint32(i % 4), ID: uint32(i), Serial: 1})
			if err != nil {
				b.Fatal(err)
			}
			pids[i] = p
		} else {
			pids[i] = actor.PidOf(7, uint32(i), 1)
		}
	}
	return pids
}

func benchPidMap(b *testing.B, remote bool) {
	pids := benchPids(b, remote)
	m := make(map[actor.Pid]int, len(pids))
	for i, p := range pids {
		m[p] = i
	}
	b.ReportAllocs()
	b.ResetTimer()
	sum := 0
	for i := 0; i < b.N; i++ {
		sum += m[pids[i&1023]]
	}
	if sum < 0 {
		b.Fatal(sum)
	}
}

func BenchmarkPidMapLookupLocal(b *testing.B)  { benchPidMap(b, false) }
func BenchmarkPidMapLookupRemote(b *testing.B) { benchPidMap(b, true) }

func benchPidEqual(b *testing.B, remote bool) {
	pids := benchPids(b, remote)
	cp := append([]actor.Pid(nil), pids...)
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		if pids[i&1023] == cp[(i+i>>10)&1023] {
			n++
		}
	}
	if n < 0 {
		b.Fatal(n)
	}
}

func BenchmarkPidEqualLocal(b *testing.B)  { benchPidEqual(b, false) }
func BenchmarkPidEqualRemote(b *testing.B) { benchPidEqual(b, true) }

// BenchmarkRemotePidKnownNode is what decoding a pid of a node already
// known costs in the identity table.
func BenchmarkRemotePidKnownNode(b *testing.B) {
	id := actor.RemoteID{Node: "bench@127.0.0.1", Creation: 3, ID: 1, Serial: 1}
	keep, _ := actor.RemotePid(id)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := actor.RemotePid(id); err != nil {
				b.Fatal(err)
			}
		}
	})
	_ = keep
}

// BenchmarkPidRemote is what encoding a remote pid asks of the table.
func BenchmarkPidRemote(b *testing.B) {
	pids := benchPids(b, true)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, ok := pids[i&1023].Remote(); !ok {
				b.Fatal("not remote")
			}
			i++
		}
	})
}
