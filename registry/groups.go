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
//
// Monitors (pg:monitor/1). A monitor of a group is told of every join and
// leave of the group from the moment it starts, and Monitor returns the
// members at that moment. Two things make this hard, and one lock answers
// both:
//   - No change lost or counted twice between the snapshot and the first
//     notification: Monitor takes the snapshot and records the monitor in
//     one step under mu (exclusive), and every change notifies the monitors
//     recorded when it is made, under the same lock.
//   - Order: a join and then a leave of one pid, made by two goroutines, must
//     never reach a monitor as leave then join (a watcher rebuilding the
//     multiset would count the pid -1, then 0, where it is 1). So the
//     notifications are handed to Notify while mu is still held: changes to
//     a group are serialised by mu, and so are their notifications. Notify
//     must only queue (the runtime pushes onto a lock-free mailbox); it must
//     not block or call back into Groups.
// Rejected: collecting the notifications under mu and delivering them after
// unlocking. Two changes to one group by two goroutines could then be
// delivered in the opposite order, which per-monitor sequence numbers could
// only detect (the watcher would have to buffer and reorder), not prevent.
//
// Each monitor numbers the changes it is told (Change.Seq, from 1), so that
// its owner can tell, when it stops the monitor, which notifications are
// still on their way (Demonitor returns the last number given).
//
// A group's monitors live in watches (group -> monitors, oldest first),
// byRef (ref -> monitor) and watching (watcher -> its monitors), all under
// mu. A monitor is in all three or in none. A group with monitors but no
// members does not exist for Members and Which, as in pg.

import (
	"fmt"
	"slices"
	"sync"
)

// Groups holds process groups with OTP pg semantics on a single node. The zero
// Groups is empty and ready to use. Groups must not be copied after first use.
// All methods are safe for concurrent use; a Join happens before any Members
// call that lists its entry, and before the Notify calls that tell monitors
// of it return.
type Groups[P comparable] struct {
	// Notify, if set, is called once for each monitor of a group whose
	// members change (Join, Leave, RemoveAll), with the Groups lock held:
	// for one group, calls follow the order of the changes. It must not
	// block or call back into this Groups. Set it before first use and do not
	// change it; nil records monitors but tells them nothing.
	Notify func(Change[P])

	mu      sync.RWMutex
	members map[string][]P       // group -> one entry per join, oldest first; guarded by mu
	joined  map[P]map[string]int // pid -> group -> its entries there; guarded by mu

	watches  map[string][]*watch[P] // group -> its monitors, oldest first; guarded by mu
	byRef    map[uint64]*watch[P]   // monitor ref -> monitor; guarded by mu
	watching map[P][]*watch[P]      // watcher -> its monitors; guarded by mu
}

// watch is one monitor of a group. All fields are guarded by Groups.mu.
type watch[P comparable] struct {
	ref     uint64
	watcher P
	group   string
	seq     uint64 // the number of changes told so far
}

// Change is a change to a group's members, as one monitor of the group is
// told of it (pg's {Ref, join | leave, Group, Pids} message).
type Change[P comparable] struct {
	Ref     uint64 // the monitor's reference, as given to Monitor
	Watcher P      // the monitor's owner
	Seq     uint64 // 1, 2, ...: this change's number among those told to this monitor
	Group   string
	Joined  bool // true: Pids joined Group; false: they left it
	Pids    []P  // a fresh slice for each call: the callee may keep it
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
	g.notifyLocked(group, true, p)
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
			g.notifyLocked(group, false, p)
			return nil
		}
	}
	panic(fmt.Sprintf("registry: Groups index broken: pid counted in group %q but not listed", group))
}

// RemoveAll removes every entry p has in every group, and every monitor p
// owns; the runtime calls it when p dies. Each group's monitors are told of
// one leave per entry removed, as pg tells them when a member dies (across
// groups, in no defined order). p's own monitors go first, so p is told
// nothing. It costs two map lookups when p has joined and monitors nothing.
func (g *Groups[P]) RemoveAll(p P) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, w := range g.watching[p] {
		g.dropWatchLocked(w)
	}
	delete(g.watching, p)
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
		for range n {
			g.notifyLocked(group, false, p)
		}
	}
	delete(g.joined, p)
}

// Monitor starts a monitor of group (pg:monitor/1), named ref and owned by
// watcher, and returns the group's entries at that moment, in join order
// (nil for a group with no members). The monitor is told of every later
// change to the group through Notify, starting with the first change after
// the snapshot: none is missed or told twice. It lasts until Demonitor, or
// RemoveAll of its watcher. The caller must give each monitor a ref of its
// own; a ref already in use is a misuse and panics.
func (g *Groups[P]) Monitor(group string, ref uint64, watcher P) []P {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byRef == nil {
		g.watches = make(map[string][]*watch[P])
		g.byRef = make(map[uint64]*watch[P])
		g.watching = make(map[P][]*watch[P])
	}
	if _, dup := g.byRef[ref]; dup {
		panic(fmt.Sprintf("registry: Groups.Monitor: ref %d already names a monitor", ref))
	}
	w := &watch[P]{ref: ref, watcher: watcher, group: group}
	g.byRef[ref] = w
	g.watches[group] = append(g.watches[group], w)
	g.watching[watcher] = append(g.watching[watcher], w)
	return slices.Clone(g.members[group])
}

// Demonitor stops the monitor ref if watcher owns it (pg:demonitor/1). It
// returns the number of changes the monitor was told (the Seq of the last
// one, 0 if none) and whether it stopped a monitor; once it returns, Notify
// is never called for ref again.
func (g *Groups[P]) Demonitor(ref uint64, watcher P) (told uint64, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byRef[ref]
	if w == nil || w.watcher != watcher {
		return 0, false
	}
	g.dropWatchLocked(w)
	removeWatch(g.watching, watcher, w)
	return w.seq, true
}

// MonitorCount returns the number of monitors in force, of every group.
func (g *Groups[P]) MonitorCount() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.byRef)
}

// Watching returns the number of monitors watcher holds, of every group
// (the group half of process_info(Pid, monitors)).
func (g *Groups[P]) Watching(watcher P) int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.watching[watcher])
}

// dropWatchLocked removes w from byRef and from its group's monitors; the
// caller removes it from watching. g.mu must be held for writing.
func (g *Groups[P]) dropWatchLocked(w *watch[P]) {
	delete(g.byRef, w.ref)
	removeWatch(g.watches, w.group, w)
}

// removeWatch removes w from m[k], and k from m once its list is empty.
func removeWatch[K comparable, P comparable](m map[K][]*watch[P], k K, w *watch[P]) {
	ws := slices.DeleteFunc(m[k], func(x *watch[P]) bool { return x == w })
	if len(ws) == 0 {
		delete(m, k)
		return
	}
	m[k] = ws
}

// notifyLocked tells every monitor of group that p joined or left it. It
// costs one map lookup for a group nobody monitors. g.mu must be held for
// writing: the lock is what keeps the notifications of one group in the
// order of its changes (the design note).
func (g *Groups[P]) notifyLocked(group string, joined bool, p P) {
	ws := g.watches[group]
	if len(ws) == 0 || g.Notify == nil {
		return
	}
	for _, w := range ws {
		w.seq++
		g.Notify(Change[P]{Ref: w.ref, Watcher: w.watcher, Seq: w.seq, Group: group, Joined: joined, Pids: []P{p}})
	}
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
