package actor

import (
	"testing"

	"pgregory.net/rapid"
)

// TestActCounterModel runs the role activation counter's protocol (sched.go,
// enterAct/chainAct/settleAct; watchdog.go, retake's claim) against a
// model: the number of activations Stats reports is exact whenever the
// counter is at rest (but for one per retirement that lands between two
// activations of a chain), a watchdog claim succeeds only on an odd counter it
// read, and after a claim every further move by the holder fails, so the
// holder gives the role up before it could park on it.
func TestActCounterModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := new(schedStats)
		s := &sched{st: st}
		var (
			done    uint64 // activations finished (or claimed by the watchdog)
			running bool   // an activation is under way
			retired bool
			slack   uint64 // claims between two activations of a chain
		)
		t.Repeat(map[string]func(*rapid.T){
			// The holder runs one activation to its end (run: enterAct, chainAct).
			"activation": func(t *rapid.T) {
				if retired || running {
					t.Skip()
				}
				s.enterAct()
				if !s.chainAct() {
					t.Fatal("chainAct failed on a role nobody retired")
				}
				done++
			},
			// The holder finds nothing to do and parks (findRunnable).
			"settle": func(t *rapid.T) {
				if retired || running {
					t.Skip()
				}
				if !s.settleAct() {
					t.Fatal("settleAct failed on a role nobody retired")
				}
				if s.act.Load()&1 != 0 {
					t.Fatal("settled, yet the counter is odd")
				}
			},
			// A handler blocks: its activation hands the role away (waitPark)
			// and resumes later on it, then ends.
			"block": func(t *rapid.T) {
				if retired || running {
					t.Skip()
				}
				s.enterAct()
				if !s.settleAct() {
					t.Fatal("settleAct (hand-off) failed on a role nobody retired")
				}
				s.enterAct() // resumed
				running = true
			},
			"finish blocked": func(t *rapid.T) {
				if retired || !running {
					t.Skip()
				}
				if !s.chainAct() {
					t.Fatal("chainAct failed on a role nobody retired")
				}
				running = false
				done++
			},
			// The watchdog claims what it sees, if it is odd (retake).
			"watchdog": func(t *rapid.T) {
				if retired {
					t.Skip()
				}
				a := s.act.Load()
				claimed := a&1 == 1 && s.act.CompareAndSwap(a, a|actRetired)
				if claimed != (a&1 == 1) {
					t.Fatal("the claim of an odd counter at rest failed")
				}
				if claimed {
					st.activations.Add((a + 1) / 2)
					retired = true
					if running {
						running = false
						done++ // the stuck one, as retake counts it
					} else if a != 1 {
						// Claimed between two activations of a chain: retake
						// counts one that the holder runs only if it finds
						// work before it sees the claim.
						slack++
					}
					// The fresh role starts from zero.
					s = &sched{st: st}
					if s.chainAct() != true || s.settleAct() != true {
						t.Fatal("a fresh role's counter refused a move")
					}
					retired = false
				}
			},
		})
		if running {
			return // mid-activation: the count includes the running one or not
		}
		if got := activations(st, s); got < done || got > done+slack {
			t.Fatalf("Stats says %d activations, the model %d (+%d)", got, done, slack)
		}
	})
}
