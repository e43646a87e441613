package etf_test

// A node that runs for years meets node incarnations without end: peers
// restarting with new creations, and made-up third nodes in their pids.
// Decoding their pids must keep working (the identity table gives back
// what nobody holds), memory must stay flat after a collection, and pids
// still held must keep naming their nodes however often slots are reused.

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// newPidExt is NEW_PID_EXT of (node, id, serial, creation), written by hand:
// encoding a Pid would make its identity before the decoder meets it.
func newPidExt(b []byte, node string, id, serial, creation uint32) []byte {
	b = append(b, 88, 119, byte(len(node)))
	b = append(b, node...)
	b = binary.BigEndian.AppendUint32(b, id)
	b = binary.BigEndian.AppendUint32(b, serial)
	return binary.BigEndian.AppendUint32(b, creation)
}

// settle collects until the process holds at most max node identities.
func settle(t *testing.T, max int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		if actor.RemoteNodes() <= max {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after collections the process holds %d node identities, want at most %d", actor.RemoteNodes(), max)
		}
		time.Sleep(time.Millisecond) // the cleanup goroutine runs
	}
}

func TestNodeIdentityChurnKeepsMeetingNewNodes(t *testing.T) {
	total := 100_000
	if os.Getenv("COLONY_SOAK") != "" {
		total = 1_000_000
	}
	const (
		peers      = 1000 // names that restart: creation goes up each round
		heldRing   = 256  // pids kept, as links and monitors would
		checkpoint = 10
	)
	var created int
	d := etf.Decoder{NewNode: func(actor.Pid) error { created++; return nil }}
	type held struct {
		p  actor.Pid
		id actor.RemoteID
	}
	ring := make([]held, heldRing)
	settle(t, actor.RemoteNodes())
	base := actor.RemoteNodes()
	var heaps []uint64
	var ms runtime.MemStats
	buf := make([]byte, 0, 64)
	for i := range total {
		// Even steps: a peer restarts with a new creation. Odd steps: a
		// made-up third node, never seen again.
		var id actor.RemoteID
		if i%2 == 0 {
			id = actor.RemoteID{Node: actor.Atom(fmt.Sprintf("peer%d@h", i/2%peers)), Creation: uint32(i/2/peers + 1), ID: uint32(i), Serial: 1}
		} else {
			id = actor.RemoteID{Node: actor.Atom(fmt.Sprintf("ghost%d@h", i)), Creation: 1, ID: uint32(i), Serial: 2}
		}
		buf = newPidExt(buf[:0], string(id.Node), id.ID, id.Serial, id.Creation)
		v, _, err := d.Decode(buf)
		if err != nil {
			t.Fatalf("incarnation %d (%v): %v", i, id, err)
		}
		ring[i%heldRing] = held{v.(actor.Pid), id}
		if (i+1)%(total/checkpoint) == 0 {
			settle(t, base+heldRing)
			runtime.GC()
			runtime.ReadMemStats(&ms)
			heaps = append(heaps, ms.HeapAlloc)
			t.Logf("after %7d incarnations: heap %6d KiB, %d identities held", i+1, ms.HeapAlloc>>10, actor.RemoteNodes())
		}
	}
	if created != total {
		t.Errorf("%d identities reported new, want %d (every incarnation is new)", created, total)
	}
	for _, h := range ring {
		if got, ok := h.p.Remote(); !ok || got != h.id {
			t.Errorf("a held pid of %v now names %v", h.id, got)
		}
	}
	// Flat: the last checkpoint within 2 MiB of the first. (Nothing is
	// kept per incarnation, so a leak of even 8 bytes each is 8 MB here at
	// the soak size, 800 KB at the default one.)
	const slack = 2 << 20
	if first, last := heaps[0], heaps[len(heaps)-1]; last > first+slack {
		t.Errorf("heap grew from %d KiB to %d KiB over %d incarnations", first>>10, last>>10, total)
	}
}
