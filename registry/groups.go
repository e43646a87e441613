package registry

// Design note: process groups.
//
// Problem. OTP pg semantics on one node: a group is a multiset of pids in join
// order (a pid joining twice is listed twice and needs two leaves), groups
// exist while they have members, and a dying pid leaves every group at once.
// The death path runs for every process, most of which never joined a group,
// so RemoveAll of a pid with no groups must cost one map lookup, not a scan of
// all groups.
//
// Rejected.
//   - A concurrent map of group -> slice with per-group locks: Join/Leave touch
//     both the group's list and the pid's index, and RemoveAll touches many
//     groups; per-group locks would need a lock order across groups for no
//     measured gain (pg itself funnels every write through one server).
//   - Members without copying (copy-on-write slices handed out shared): saves a
//     copy per read but lets a caller's append or write corrupt the group.
//
// Protocol. One sync.RWMutex guards both indexes: members (group -> entries
// in join order) and joined (pid -> group -> number of its entries there).
// Writers (Join, Leave, RemoveAll) take it exclusively and update both; readers
// (Members, Which) share it and return copies. Invariant under mu: for every
// pid p and group g, joined[p][g] equals the count of p in members[g], no
// count is zero, no group's list is empty, no pid's map is empty.
//
// Leave removes the most recent of p's entries, as pg:leave/2 does (pg keeps
// members newest first and deletes the first match). Leave and RemoveAll cost
// O(group size), as in pg.

import (
	"fmt"
	"slices"
	"sync"
)

// Groups holds process groups with OTP pg semantics on a single node. The zero
// Groups is empty and ready to use. Groups must not be copied after first use.
// All methods are safe for concurrent use; a Join happens before any Members
// call that lists its entry.
type Groups[P comparable] struct {
	mu      sync.RWMutex
	members map[string][]P       // group -> one entry per join, oldest first; guarded by mu
	joined  map[P]map[string]int // pid -> group -> its entries there; guarded by mu
}

// Join adds one entry for p to group, creating the group if needed. A process
// may join a group several times; each join is one entry (pg:join/2).
func (g *Groups[P]) Join(group string, p P) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.members == nil {
		g.members = make(map[string][]P)
		g.joined = make(map[P]map[string]int)
	}
	g.members[group] = append(g.members[group], p)
	in := g.joined[p]
	if in == nil {
		in = make(map[string]int, 1)
		g.joined[p] = in
	}
	in[group]++
}

// Leave removes p's most recent entry from group; the group vanishes with its
// last entry. It fails with ErrNotJoined if p has no entry in group
// (pg:leave/2 returning not_joined).
func (g *Groups[P]) Leave(group string, p P) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	in := g.joined[p]
	if in[group] == 0 {
		return fmt.Errorf("%w: %q", ErrNotJoined, group)
	}
	if in[group]--; in[group] == 0 {
		delete(in, group)
		if len(in) == 0 {
			delete(g.joined, p)
		}
	}
	list := g.members[group]
	for i := len(list) - 1; i >= 0; i-- { // the most recent entry
		if list[i] == p {
			g.setLocked(group, slices.Delete(list, i, i+1))
			return nil
		}
	}
	panic(fmt.Sprintf("registry: Groups index broken: pid counted in group %q but not listed", group))
}

// RemoveAll removes every entry p has in every group; the runtime calls it
// when p dies. It costs one map lookup when p has joined no group.
func (g *Groups[P]) RemoveAll(p P) {
	g.mu.Lock()
	defer g.mu.Unlock()
	in := g.joined[p]
	if in == nil {
		return
	}
	for group, n := range in {
		list := g.members[group]
		kept := slices.DeleteFunc(list, func(q P) bool { return q == p })
		if len(list)-len(kept) != n {
			panic(fmt.Sprintf("registry: Groups index broken: pid counted %d times in group %q, listed %d",
				n, group, len(list)-len(kept)))
		}
		g.setLocked(group, kept)
	}
	delete(g.joined, p)
}

// setLocked stores a group's new list, dropping the group when it is empty.
// g.mu must be held for writing.
func (g *Groups[P]) setLocked(group string, list []P) {
	if len(list) == 0 {
		delete(g.members, group)
		return
	}
	g.members[group] = list
}

// Members returns group's entries in join order, one per join, so a pid that
// joined twice appears twice. It returns nil for a group with no members.
// The slice is the caller's.
//
// pg:get_members/1 lists the same entries newest first; Members lists them
// oldest first.
func (g *Groups[P]) Members(group string) []P {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return slices.Clone(g.members[group])
}

// Which returns the groups that have members, sorted (pg:which_groups/0).
func (g *Groups[P]) Which() []string {
	g.mu.RLock()
	names := make([]string, 0, len(g.members))
	for name := range g.members {
		names = append(names, name)
	}
	g.mu.RUnlock()
	slices.Sort(names)
	return names
}
