package monitor

// Design note: the per-actor link and monitor record.
//
// Problem. Links (bidirectional), monitors others hold on an actor, and
// monitors the actor holds on others are cold data: most actors have none,
// workers have one or two, supervisors may have thousands. They are touched
// from many goroutines: any actor may link to or monitor any other while the
// owner runs, and the owner's death must collect all of them exactly once,
// racing new Link and Monitor calls from other actors. The hard race is
// AddLink(owner) against the owner's Close: a link added after Close collected
// the set would never see the exit signal, and the peer would wait forever
// for a death it already missed.
//
// Rejected.
//   - Global link/monitor tables keyed by pid: one lock or one concurrent map
//     for the whole system puts every Link, Monitor and death on shared
//     lines, and Close would have to scan or index by owner anyway.
//   - A lock-free set with a "closed" bit in a word: Close must take a
//     consistent snapshot of three sets at once and refuse later adds; with a
//     CAS per set the snapshot and the refusal need a protocol as complex as
//     a lock, for a path (link/monitor/death) that is not hot.
//   - Go maps for every set: an empty nil map is free, but the first entry
//     allocates a whole map (about 200 bytes on amd64 for a 16-byte pid),
//     while the common case is one or two entries.
//
// Protocol. Each Node has its own sync.Mutex guarding closed and the three
// sets. Close sets closed and takes the sets in one critical section, so every
// Add either precedes Close (and its entry is in what Close returns, once) or
// follows it (and fails, returning false). That critical section is the
// linearization point of the owner's death for this record.
//
// Links are pairs. A link has a half in each owner's Node, and the race that
// makes them hard is two operations on one pair at once: A's Link(B) racing
// B's Unlink(A), each updating one half and then the other under that node's
// lock alone, interleaved so that one half survives (a half-made link:
// Info counts it on one side only until a later Unlink or a death).
// Link and Unlink (the functions) therefore take both nodes' locks and change
// both halves in one critical section, which is the operation's
// linearization point. Pair invariant: while both nodes are open, a holds
// b's owner iff b holds a's. AddLink, RemoveLink and RemoveLinkThen change
// one half, so they keep it only where no pair operation can run between
// the two halves (the actor package's SpawnLink makes both before anyone
// can name the child) and for the exit signal of a Close (RemoveLinkThen on
// the survivor's half).
// Close closes one node, so between a Close and that removal the survivor
// alone holds its half; a Link or Unlink then sees the dead side closed and
// acts on that (see Link and Unlink). Rejected: a per-pair lock or table
// (shared state per pair, and Close would have to find it), and repairing a
// half-made link afterwards (the repairer races the next Link or Unlink on
// the pair in the same way).
//
// The exit signal. A death's signal to a survivor is the survivor's half
// removed (RemoveLinkThen) and the signal delivered, in one critical section
// under the survivor's lock. Done in two steps, an Unlink by the survivor
// between them found no link and returned, and the signal came after it: an
// Exit in the mailbox of an actor that had unlinked, or its death by a link
// it had removed (unlink/1: once it returns, the link "has no effect on the
// caller in the future"; an {'EXIT', _, _} from it is queued already or
// never comes).
//
// Lock order: Node.mu is held with no lock but another Node's: Link and
// Unlink hold two, taken in address order (lockPair), as the Go runtime locks
// the channels of a select (runtime/select.go, sellock); every other method
// holds its own alone. No callback runs under it but RemoveLinkThen's
// signal, which only queues; the other methods return copies.
//
// Memory. The sets are smallMaps: inline slices up to smallMax entries, Go
// maps above. A Node holds no heap memory until it holds an entry; its fixed
// size is 112 bytes on 64-bit platforms (checked by TestNodeSize), and the
// actor package allocates it lazily, only for actors that link or monitor or
// are monitored.

import (
	"fmt"
	"sync"
	"unsafe"
)

// Monitor is a monitor held on a Node's owner: Watcher gets Down with Ref when
// the owner dies.
type Monitor[P comparable] struct {
	Ref     uint64
	Watcher P
}

// Watch is a monitor a Node's owner holds on Target, remembered so the owner
// can Demonitor it by ref and so it can be removed from Target at the owner's
// death.
type Watch[P comparable] struct {
	Ref    uint64
	Target P
}

// Node is the link and monitor record of one actor (its owner). The zero Node
// is empty, open and ready to use. A Node must not be copied after first use.
// All methods are safe for concurrent use. Close is the owner's death: every
// Add that returned true happens before the Close that returns its entry, and
// every Add after Close returns false.
type Node[P comparable] struct {
	mu       sync.Mutex
	closed   bool                  // guarded by mu; set once by Close, never cleared
	links    smallMap[P, struct{}] // guarded by mu: peers linked to the owner
	monitors smallMap[uint64, P]   // guarded by mu: ref -> watcher, monitors held on the owner
	watching smallMap[uint64, P]   // guarded by mu: ref -> target, monitors the owner holds
}

// AddLink records a link from the owner to peer. It reports false, changing
// nothing, if the node is closed (the owner is dead). Links are a set, not
// counted: linking an already linked peer again is a no-op that reports true
// (link/1 "if the link already exists ... nothing is done").
func (n *Node[P]) AddLink(peer P) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.links.add(peer, struct{}{})
	return true
}

// RemoveLink removes the link to peer and reports whether there was one.
func (n *Node[P]) RemoveLink(peer P) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.links.del(peer)
	return ok
}

// RemoveLinkThen removes the link to peer and, if there was one, calls
// signal before it releases the lock, and reports whether there was one.
// It is the survivor's side of a death's exit signal (the design note,
// "The exit signal"): signal delivers it, and an Unlink of the pair that
// finds the link gone has waited for the delivery. signal must only queue
// (push onto a mailbox, wake): it must not block, nor touch any Node.
func (n *Node[P]) RemoveLinkThen(peer P, signal func()) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.links.del(peer); !ok {
		return false
	}
	signal()
	return true
}

// LinkResult is what Link did.
type LinkResult uint8

const (
	Linked   LinkResult = iota // both halves recorded, or the link was already there
	SelfDead                   // a is closed: nothing changed
	PeerDead                   // b is closed: nothing changed
)

// Link links the owners of a and b (pa owns a, pb owns b): it records pb in a
// and pa in b in one critical section under both locks, so no Link, Unlink or
// Close on either node sees one half without the other (the pair invariant,
// in the design note). It reports SelfDead if a is closed, and PeerDead if b
// is, changing nothing. A link a already holds is left as it is and reports
// Linked even if b has closed since (link/1: "if the link already exists ...
// nothing is done"; b's Close returned pa, and its exit signal is on its
// way). a and b may be the same Node only if it is closed.
func Link[P comparable](a *Node[P], pa P, b *Node[P], pb P) LinkResult {
	lockPair(a, b)
	defer unlockPair(a, b)
	if a.closed {
		return SelfDead
	}
	if _, ok := a.links.get(pb); ok {
		return Linked
	}
	if b.closed {
		return PeerDead
	}
	a.links.add(pb, struct{}{})
	b.links.add(pa, struct{}{})
	return Linked
}

// Unlink removes the link between the owners of a and b, both halves in one
// critical section under both locks, and reports whether a held it. If a is
// closed it changes nothing and reports false: a dead owner cannot unlink
// (OTP: once dead, the link's exit signal is delivered). a's Close took the
// link, and whoever ran it removes b's half and signals b; removing b's half
// here would race that and could swallow the signal. b closed is no
// obstacle: a's half goes, and b's exit signal, finding it gone, is dropped
// (the unlink came first).
func Unlink[P comparable](a *Node[P], pa P, b *Node[P], pb P) bool {
	lockPair(a, b)
	defer unlockPair(a, b)
	if a.closed {
		return false
	}
	_, ok := a.links.del(pb)
	b.links.del(pa) // nothing to do if b is closed: Close emptied it
	return ok
}

// lockPair locks a and b in address order, the one order in which two Node
// locks are ever held, so two pair operations cannot deadlock. Address order
// is a total order that does not change: a Node two goroutines share has
// escaped to the heap, and Go's collector does not move heap objects (the
// runtime's sellock relies on the same). a == b (the actor package shares
// one closed Node among actors that died without one) locks once.
func lockPair[P comparable](a, b *Node[P]) {
	switch {
	case a == b:
		a.mu.Lock()
	case uintptr(unsafe.Pointer(a)) < uintptr(unsafe.Pointer(b)):
		a.mu.Lock()
		b.mu.Lock()
	default:
		b.mu.Lock()
		a.mu.Lock()
	}
}

func unlockPair[P comparable](a, b *Node[P]) {
	a.mu.Unlock()
	if b != a {
		b.mu.Unlock()
	}
}

// HasLink reports whether the owner is linked to peer.
func (n *Node[P]) HasLink(peer P) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.links.get(peer)
	return ok
}

// AnyLink reports whether pred holds for some peer linked to the owner.
// pred runs under the node's lock: it must not touch this node.
func (n *Node[P]) AnyLink(pred func(peer P) bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.links.any(func(p P, _ struct{}) bool { return pred(p) })
}

// AddMonitor records that watcher monitors the owner under ref. It reports
// false, changing nothing, if the node is closed: the owner is dead and the
// caller must deliver Down with reason noproc at once (erlang:monitor/2).
// It panics if ref is 0 or already recorded: refs come from Refs, which never
// repeats them.
func (n *Node[P]) AddMonitor(ref uint64, watcher P) bool {
	return n.addRef("AddMonitor", &n.monitors, ref, watcher)
}

// RemoveMonitor removes the monitor ref held on the owner and reports whether
// it was there.
func (n *Node[P]) RemoveMonitor(ref uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.monitors.del(ref)
	return ok
}

// AddWatching records that the owner monitors target under ref. It reports
// false, changing nothing, if the node is closed (the owner died meanwhile,
// e.g. killed while calling Monitor); the caller then removes the monitor it
// just placed on target. It panics if ref is 0 or already recorded.
func (n *Node[P]) AddWatching(ref uint64, target P) bool {
	return n.addRef("AddWatching", &n.watching, ref, target)
}

// addRef records ref -> p in m unless the node is closed; op names the
// caller in the panic for a zero or reused ref.
func (n *Node[P]) addRef(op string, m *smallMap[uint64, P], ref uint64, p P) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	if ref == 0 || !m.add(ref, p) {
		panic(fmt.Sprintf("monitor: %s: ref %d is zero or already in use (refs must come from Refs)", op, ref))
	}
	return true
}

// RemoveWatching removes the owner's monitor ref and returns its target, so
// Demonitor(ref) knows which node to remove the monitor from.
func (n *Node[P]) RemoveWatching(ref uint64) (P, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.watching.del(ref)
}

// Closed reports whether Close has been called.
func (n *Node[P]) Closed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.closed
}

// Close marks the owner dead and returns, in no set order, every link, every
// monitor held on the owner and every monitor the owner holds, emptying the
// node. It is the one place the death collects them: each entry is returned
// exactly once, a second Close returns nothing, and every later Add reports
// false. The caller then sends the link exit signals, the Down messages, and
// removes the owner's monitors from their targets.
func (n *Node[P]) Close() (links []P, monitors []Monitor[P], watching []Watch[P]) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, nil, nil
	}
	n.closed = true
	if c := n.links.len(); c > 0 {
		links = make([]P, 0, c)
		n.links.take(func(p P, _ struct{}) { links = append(links, p) })
	}
	if c := n.monitors.len(); c > 0 {
		monitors = make([]Monitor[P], 0, c)
		n.monitors.take(func(ref uint64, p P) { monitors = append(monitors, Monitor[P]{ref, p}) })
	}
	if c := n.watching.len(); c > 0 {
		watching = make([]Watch[P], 0, c)
		n.watching.take(func(ref uint64, p P) { watching = append(watching, Watch[P]{ref, p}) })
	}
	return links, monitors, watching
}

// Counts returns the number of links, of monitors held on the owner, and of
// monitors the owner holds on others.
func (n *Node[P]) Counts() (links, monitors, watching int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.links.len(), n.monitors.len(), n.watching.len()
}
