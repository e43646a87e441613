package pg_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/pg"
	"github.com/colonyrt/colony/internal/disttest"
	"pgregory.net/rapid"
)

// The scope against a model: random joins (some of several pids, some of
// one pid twice), leaves and deaths on two connected nodes. After each
// step the acting node's view is the model's at once (a join or leave
// returns once the local table has it), and the other node's view becomes
// the model's (the broadcast arrives); at the end every member dies and
// both views empty.
func TestModelTwoNodes(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, "")
	b := startNode(t, port, "")
	if err := a.Connect(disttest.Ctx(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	sides := []*node{a, b}
	iteration := 0
	rapid.Check(t, func(rt *rapid.T) {
		iteration++
		groups := []any{etf.Tuple{actor.Atom("g"), iteration, 0}, etf.Tuple{actor.Atom("g"), iteration, 1}}
		type member struct {
			side int
			pid  actor.Pid
			view actor.Pid // the pid as the other side sees it
		}
		var members []member
		for s, n := range sides {
			for range 3 {
				p, err := n.sys.Spawn(idle{})
				if err != nil {
					rt.Fatal(err)
				}
				members = append(members, member{s, p, pb2Remote(t, p, n)})
			}
		}
		// model[g][i]: how many times member i is in group g.
		model := make([]map[int]int, len(groups))
		for g := range model {
			model[g] = map[int]int{}
		}
		alive := map[int]bool{}
		for i := range members {
			alive[i] = true
		}
		// check compares both sides' views of every group with the model.
		check := func(rt *rapid.T, what string) {
			for g, group := range groups {
				for s := range sides {
					// side s sees its own members by their pid and the
					// other side's by their remote pid
					wantS := map[actor.Pid]int{}
					for i, k := range model[g] {
						if k == 0 {
							continue
						}
						p := members[i].pid
						if members[i].side != s {
							p = members[i].view
						}
						wantS[p] = k
					}
					ok := false
					var got []actor.Pid
					for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
						got = sides[s].scope.Members(group)
						if sameMultiset(got, wantS) {
							ok = true
							break
						}
					}
					if !ok {
						rt.Fatalf("after %s: side %d sees %v in group %d, want %v", what, s, got, g, wantS)
					}
				}
			}
		}
		pickAlive := func(rt *rapid.T) (int, bool) {
			var live []int
			for i := range members {
				if alive[i] {
					live = append(live, i)
				}
			}
			if len(live) == 0 {
				return 0, false
			}
			return rapid.SampledFrom(live).Draw(rt, "member"), true
		}
		rt.Repeat(map[string]func(*rapid.T){
			"join": func(rt *rapid.T) {
				i, ok := pickAlive(rt)
				if !ok {
					return
				}
				g := rapid.IntRange(0, len(groups)-1).Draw(rt, "group")
				times := rapid.IntRange(1, 2).Draw(rt, "times")
				m := members[i]
				pids := slices.Repeat([]actor.Pid{m.pid}, times)
				if err := sides[m.side].scope.Join(sides[m.side].sys, groups[g], pids...); err != nil {
					rt.Fatal(err)
				}
				model[g][i] += times
				check(rt, fmt.Sprintf("join of %d to %d (%d times)", i, g, times))
			},
			"leave": func(rt *rapid.T) {
				i, ok := pickAlive(rt)
				if !ok {
					return
				}
				g := rapid.IntRange(0, len(groups)-1).Draw(rt, "group")
				m := members[i]
				err := sides[m.side].scope.Leave(sides[m.side].sys, groups[g], m.pid)
				if model[g][i] == 0 {
					if !errors.Is(err, pg.ErrNotJoined) {
						rt.Fatalf("leave of a member not joined: %v", err)
					}
					return
				}
				if err != nil {
					rt.Fatal(err)
				}
				model[g][i]--
				check(rt, fmt.Sprintf("leave of %d from %d", i, g))
			},
			"kill": func(rt *rapid.T) {
				i, ok := pickAlive(rt)
				if !ok {
					return
				}
				m := members[i]
				sides[m.side].sys.Exit(m.pid, actor.Kill)
				alive[i] = false
				for g := range model {
					delete(model[g], i)
				}
				check(rt, fmt.Sprintf("death of %d", i))
			},
		})
		for i, m := range members {
			if alive[i] {
				sides[m.side].sys.Exit(m.pid, actor.Kill)
			}
		}
		for g := range model {
			clear(model[g])
		}
		check(rt, "every death")
	})
}

func sameMultiset(got []actor.Pid, want map[actor.Pid]int) bool {
	n := 0
	for _, k := range want {
		n += k
	}
	if len(got) != n {
		return false
	}
	for p, k := range want {
		if count(got, p) != k {
			return false
		}
	}
	return true
}
