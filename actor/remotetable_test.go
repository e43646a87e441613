package actor_test

// The remote node identity table (remote.go) against a model: identities
// are interned, held by pids, dropped and collected; after a collection
// exactly the held ones are left, a reclaimed key is interned afresh, and
// no two held pids of different nodes ever share a slot or a printed form
// however often slots are reused.

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"pgregory.net/rapid"
)

const modelPrefix = "identmodel"

type heldPid struct {
	p  actor.Pid
	id actor.RemoteID
}

type nodeKey struct {
	name     actor.Atom
	creation uint32
}

func keyOf(id actor.RemoteID) nodeKey { return nodeKey{id.Node, id.Creation} }

// collectUntil runs the GC until the table holds want entries of the
// model's nodes: the dropped identities' cleanups have run.
func collectUntil(t *rapid.T, want int) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		runtime.GC()
		got := actor.RemoteEntries(modelPrefix)
		switch {
		case got == want:
			return
		case got < want:
			t.Fatalf("the table holds %d identities of the model's nodes, fewer than the %d held: a held one was reclaimed", got, want)
		case time.Now().After(deadline):
			t.Fatalf("after collections the table holds %d identities of the model's nodes, want %d (the held ones)", got, want)
		}
		time.Sleep(time.Millisecond) // the cleanup goroutine runs
	}
}

func TestRemoteNodeTableAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var held []heldPid
		mayLive := map[nodeKey]bool{} // interned since the last collection, or held then
		heldKeys := func() map[nodeKey]bool {
			m := map[nodeKey]bool{}
			for _, h := range held {
				m[keyOf(h.id)] = true
			}
			return m
		}
		genID := func(t *rapid.T) actor.RemoteID {
			return actor.RemoteID{
				Node:     actor.Atom(fmt.Sprintf("%s%d@h", modelPrefix, rapid.IntRange(0, 4).Draw(t, "node"))),
				Creation: rapid.Uint32Range(1, 3).Draw(t, "creation"),
				ID:       rapid.Uint32Range(0, 2).Draw(t, "id"),
				Serial:   rapid.Uint32Range(0, 1).Draw(t, "serial"),
			}
		}
		intern := func(t *rapid.T) actor.Pid {
			id := genID(t)
			p, created, err := actor.InternRemotePid(id)
			if err != nil {
				t.Fatal(err)
			}
			k := keyOf(id)
			switch {
			case heldKeys()[k] && created:
				t.Fatalf("%v: created while a held pid names it", id)
			case !mayLive[k] && !created:
				t.Fatalf("%v: not created, but it was reclaimed and not interned since", id)
			}
			mayLive[k] = true
			if got, ok := p.Remote(); !ok || got != id {
				t.Fatalf("RemotePid(%v).Remote() = %v, %v", id, got, ok)
			}
			return p
		}
		t.Repeat(map[string]func(*rapid.T){
			"intern and hold": func(t *rapid.T) {
				p := intern(t)
				id, _ := p.Remote()
				held = append(held, heldPid{p, id})
			},
			"intern and drop": func(t *rapid.T) { intern(t) },
			"drop": func(t *rapid.T) {
				if len(held) == 0 {
					t.Skip("nothing held")
				}
				i := rapid.IntRange(0, len(held)-1).Draw(t, "i")
				held = slices.Delete(held, i, i+1) // clears the tail: the array holds no dropped pid
			},
			"collect": func(t *rapid.T) {
				hk := heldKeys()
				collectUntil(t, len(hk))
				mayLive = hk
			},
			"": func(t *rapid.T) {
				if err := actor.CheckRemoteTable(); err != nil {
					t.Fatal(err)
				}
				for i, a := range held {
					if got, ok := a.p.Remote(); !ok || got != a.id {
						t.Fatalf("held pid %v of %v now names %v (ok %v)", a.p, a.id, got, ok)
					}
					for _, b := range held[i+1:] {
						sameNode := keyOf(a.id) == keyOf(b.id)
						if (a.p == b.p) != (a.id == b.id) {
							t.Fatalf("pids %v of %v and %v of %v: == is %v", a.p, a.id, b.p, b.id, a.p == b.p)
						}
						if (actor.RemoteSlot(a.p) == actor.RemoteSlot(b.p)) != sameNode {
							t.Fatalf("held pids of %v and %v: slots %d and %d", a.id, b.id, actor.RemoteSlot(a.p), actor.RemoteSlot(b.p))
						}
						if (a.p.String() == b.p.String()) != (a.id == b.id) {
							t.Fatalf("held pids of %v and %v print as %v and %v", a.id, b.id, a.p, b.p)
						}
					}
				}
			},
		})
		// Whatever was held is dropped: leave the table without the
		// model's identities for the next run.
		held = nil
		collectUntil(t, 0)
	})
}
