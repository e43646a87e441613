package actor

// Remote pids and the remote node identity table.
//
// The problem. A Pid names its node. A local System is a number from
// nodeSeq. A node reached through distribution (an Erlang node, or a Colony
// System in another process) is an identity (name, creation): one
// incarnation of a node. Identities come from the network, every pid in a
// peer's terms names one, and a node that runs for years meets an unbounded
// number of them (peers restarting with new creations, remote shells and
// CLI tools with random names, a hostile peer's made-up nodes). So the
// table of identities must give back what nobody uses, and a remote Pid must
// still be a small comparable value that can key a map, whose == says
// "same actor of the same incarnation".
//
// Rejected: an append-only table indexed by a number in the pid (cannot be
// reclaimed: a pid is a plain value that Go code may keep anywhere, so the
// table cannot know that nobody holds an index, and reusing one would make
// a kept pid name another node); counting holds by links, monitors and
// connections (misses pids kept in Go variables and messages, the same
// aliasing); a generation beside the index (a 31-bit node word leaves too
// few bits for a generation that cannot wrap within a process's life, and it
// would only detect a stale pid, turning it into no node at all, where
// Erlang keeps a pid of a gone node meaningful: it still prints, encodes,
// compares and gets noconnection).
//
// The protocol (the identity invariant). A remote Pid holds a pointer to
// its identity, a *remoteNode, so the garbage collector knows who holds
// one: a Pid value anywhere (a variable, a message, a link or monitor
// record, a connection's table) keeps its identity reachable.
//
//   - Who holds a slot: a remoteNode owns its slot (the number printed in
//     the pid, remoteBit|slot in Pid.node) from its creation to its cleanup.
//     The table itself holds only a weak pointer (live: key → weak pointer),
//     so it never keeps an identity alive.
//   - When a slot may be reused: only in reclaim, the cleanup that
//     runtime.AddCleanup runs after the GC has found the remoteNode
//     unreachable; reclaim puts the slot back on the free list and removes
//     the key's entry if it is still this remoteNode's (CompareAndDelete of
//     the weak pointer: a newer identity for the same key may have replaced
//     it meanwhile).
//   - Why a stale Pid cannot alias: a Pid that exists holds its remoteNode,
//     so that remoteNode is reachable, its cleanup has not run, and its slot
//     is not free; no other live remoteNode has the slot. Equality compares
//     the pointer, so even a printed slot number is never what decides ==.
//     A remoteNode's key and slot are immutable after creation.
//   - Lookup: the table's weak pointer for a key is nil once its remoteNode
//     is unreachable (the runtime clears weak pointers before it queues
//     cleanups, and Value makes sure the object's span is swept first, so it
//     never resurrects an object the GC has condemned). An intern that finds
//     a nil weak pointer makes a new remoteNode with a new slot; the old one
//     keeps its slot until its own cleanup, so the two never share one.
//   - Two interns of one key while its identity lives get the same
//     remoteNode: creation is serialised by mu and re-checks under it, so
//     two decodings of one remote pid are == (the Pid is the same value).
//
// The hard race is between an intern and a cleanup of the same key: the
// intern sees the old identity dead and stores a new one, and then the old
// cleanup runs: its CompareAndDelete fails (the entry holds the new weak
// pointer), and it frees only its own slot.
//
// Cost: a lookup of a known identity is a lock-free sync.Map load and a
// weak pointer's Value; Pid.Remote is a pointer dereference (it took a
// read lock before). A Pid grows from 12 to 24 bytes (the pointer, then
// the three words; 20 bytes hashed and compared, in one run), so a proc,
// which holds its pid, grows from 176 to 192 bytes (the next size class);
// a slice or map of pids is now scanned by the GC. Figures in
// docs/distribution.md, "Node identities".
//
// Only pids name nodes through this table: a reference or port (dist/etf's
// Ref and Port) carries its node's name and creation itself, and holds no
// slot.
//
// Bounds. The table holds only live identities; ErrTooManyNodes is past
// maxRemoteNodes (2^24) of them at once, which no cluster reaches (memory
// would run out first). What one peer may introduce is bounded by its
// connection (dist, the node identity budget in conn.go), not here.
//
// The route costs a System without distribution nothing: Send looks a pid
// up in its own slab first, and only a pid that lookup refuses reaches
// sendRemote, which loads the installed Remote once.
//
// Locks: remoteNodes.mu is a leaf, taken by interns that create and by
// cleanups, never by a lookup of a live identity.

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"
)

// remoteBit marks a node number of a remote pid: remoteBit|slot. nodeSeq
// would need 2^31 Systems started in one process to reach it.
const remoteBit = 1 << 31

// maxRemoteNodes bounds the live identities (see Bounds above).
const maxRemoteNodes = 1 << 24

// ErrTooManyNodes: RemotePid was asked for a new node identity while the
// process holds 16,777,216 live ones.
var ErrTooManyNodes = errors.New("actor: too many remote node identities")

// ErrNoRoute: a pid names another node and this System has no distribution
// (no Remote installed), so nothing can reach it.
var ErrNoRoute = errors.New("actor: no route to remote node")

// RemoteID is what names an actor on another node: the node's name and
// creation (its incarnation), and the Erlang pid's ID and Serial words.
type RemoteID struct {
	Node     Atom
	Creation uint32
	ID       uint32
	Serial   uint32
}

type nodeKey struct {
	name     Atom
	creation uint32
}

// remoteNode is one remote node identity. Immutable after creation; it
// owns slot until its cleanup (reclaim) runs.
type remoteNode struct {
	key  nodeKey
	slot uint32
}

// remoteNodes is the table of remote node identities (the note above).
var remoteNodes struct {
	// live maps a key to its identity's weak pointer. Loaded without a
	// lock; stored and deleted only under mu.
	live sync.Map // nodeKey → weak.Pointer[remoteNode]

	mu    sync.Mutex // guards the fields below; a leaf
	free  []uint32   // slots given back by reclaim, reused last-in first-out
	next  uint32     // slots below next have been handed out
	count int        // slots owned by remoteNodes not yet reclaimed
}

// reclaimArg is what a remoteNode's cleanup needs. It must not point to
// the remoteNode (a cleanup that did would keep it reachable forever).
type reclaimArg struct {
	key  nodeKey
	wp   weak.Pointer[remoteNode]
	slot uint32
}

// internRemote returns the live identity of k, creating it if there is
// none; created says it did.
func internRemote(k nodeKey) (rn *remoteNode, created bool, err error) {
	if v, ok := remoteNodes.live.Load(k); ok {
		if rn = v.(weak.Pointer[remoteNode]).Value(); rn != nil {
			return rn, false, nil
		}
	}
	return internRemoteSlow(k)
}

// internRemoteSlow is internRemote's path for a key without a live
// identity: under mu, check again (another intern may have made it), then
// make one with a free slot.
func internRemoteSlow(k nodeKey) (*remoteNode, bool, error) {
	remoteNodes.mu.Lock()
	defer remoteNodes.mu.Unlock()
	if v, ok := remoteNodes.live.Load(k); ok {
		if rn := v.(weak.Pointer[remoteNode]).Value(); rn != nil {
			return rn, false, nil
		}
		// Dead, its cleanup not run yet: it keeps its slot until then
		// (the note: the two never share one).
	}
	if remoteNodes.count >= maxRemoteNodes {
		return nil, false, ErrTooManyNodes
	}
	var slot uint32
	if n := len(remoteNodes.free); n > 0 {
		slot = remoteNodes.free[n-1]
		remoteNodes.free = remoteNodes.free[:n-1]
	} else {
		slot = remoteNodes.next
		remoteNodes.next++
	}
	remoteNodes.count++
	rn := &remoteNode{key: k, slot: slot}
	wp := weak.Make(rn)
	remoteNodes.live.Store(k, wp)
	runtime.AddCleanup(rn, reclaim, reclaimArg{key: k, wp: wp, slot: slot})
	return rn, true, nil
}

// reclaim is a remoteNode's cleanup: the GC found it unreachable, so no Pid
// holds it, and its slot may be reused (the note's "When a slot may be
// reused").
func reclaim(a reclaimArg) {
	remoteNodes.mu.Lock()
	remoteNodes.live.CompareAndDelete(a.key, a.wp)
	remoteNodes.free = append(remoteNodes.free, a.slot)
	remoteNodes.count--
	remoteNodes.mu.Unlock()
}

// RemoteNodes returns how many remote node identities the process holds:
// those that some Pid still names, and those the GC has not reclaimed yet.
func RemoteNodes() int {
	remoteNodes.mu.Lock()
	defer remoteNodes.mu.Unlock()
	return remoteNodes.count
}

// RemotePid returns the pid that names actor (id.ID, id.Serial) of node
// (id.Node, id.Creation). Two RemotePids of one RemoteID are == for as long
// as either is held. Errors: ErrBadPid for an empty node name,
// ErrTooManyNodes past the table's bound.
func RemotePid(id RemoteID) (Pid, error) {
	p, _, err := InternRemotePid(id)
	return p, err
}

// InternRemotePid is RemotePid that also reports whether the call
// introduced the node identity (id.Node, id.Creation): true when the
// process held no live identity for it. Distribution counts these to bound
// what one peer may introduce.
func InternRemotePid(id RemoteID) (p Pid, created bool, err error) {
	if id.Node == "" {
		return Pid{}, false, fmt.Errorf("%w: empty node name", ErrBadPid)
	}
	rn, created, err := internRemote(nodeKey{id.Node, id.Creation})
	if err != nil {
		return Pid{}, false, err
	}
	return Pid{rn: rn, node: remoteBit | rn.slot, idx: id.ID, gen: id.Serial}, created, nil
}

// IsRemote reports whether p names an actor of another node (one made by
// RemotePid).
func (p Pid) IsRemote() bool { return p.rn != nil }

// Remote returns the identity of a remote pid; ok is false for a pid of a
// local System or the zero Pid.
func (p Pid) Remote() (id RemoteID, ok bool) {
	if p.rn == nil {
		return RemoteID{}, false
	}
	return RemoteID{Node: p.rn.key.name, Creation: p.rn.key.creation, ID: p.idx, Serial: p.gen}, true
}

// LocalParts returns the two words that name p within sys (the slot index
// and generation, which distribution sends as an Erlang pid's ID and
// Serial); ok is false for a pid sys did not issue.
func (sys *System) LocalParts(p Pid) (id, serial uint32, ok bool) {
	if p.node != sys.node || p.gen == 0 {
		return 0, 0, false
	}
	return p.idx, p.gen, true
}

// LocalPid is LocalParts' inverse: the pid of sys named by (id, serial). It
// may name a dead actor, or none at all (a Send to it is dropped; other
// operations say ErrNoProc or ErrBadPid), as a pid decoded from a peer may.
func (sys *System) LocalPid(id, serial uint32) Pid {
	return Pid{node: sys.node, idx: id, gen: serial}
}

// Remote routes what a System cannot deliver itself: messages to pids of
// other nodes. Distribution (package dist) installs one with SetRemote.
type Remote interface {
	// SendRemote queues msg for the remote pid to, in order with from's
	// other messages to it. from is the sending actor, or the zero Pid for
	// a sender outside the System. It must not block: a connection's
	// bounded queue refuses with an error instead.
	SendRemote(from, to Pid, msg any) error
}

type remoteBox struct {
	r Remote
	s RemoteSignals // r, if it carries signals too; else nil
}

// remote is the installed route (nil: none). Written once by SetRemote,
// read by sendRemote: the atomic pointer's store/load order the Remote's
// construction before its use.
type remoteRoute = atomic.Pointer[remoteBox]

// ErrRemoteSet: SetRemote was called on a System that has a route already.
var ErrRemoteSet = errors.New("actor: remote route already set")

// SetRemote installs the route for sends to remote pids, and for links,
// exits and monitors of remote pids if r is also a RemoteSignals (checked
// once, here). It may be set once per System.
func (sys *System) SetRemote(r Remote) error {
	if r == nil {
		return fmt.Errorf("%w: nil Remote", ErrNilBehaviour)
	}
	s, _ := r.(RemoteSignals)
	if !sys.remote.CompareAndSwap(nil, &remoteBox{r: r, s: s}) {
		return ErrRemoteSet
	}
	return nil
}

// sendRemote is send's slow path for a pid lookup refused: a remote pid
// goes to the installed route; anything else keeps lookup's error.
func (sys *System) sendRemote(w *worker, pid Pid, msg any, lookupErr error) error {
	if !pid.IsRemote() {
		return sys.unsent(lookupErr)
	}
	if sys.halt.Load() {
		return ErrStopped
	}
	b := sys.remote.Load()
	if b == nil {
		return ErrNoRoute
	}
	var from Pid
	if w != nil && w.ctx.p != nil {
		from = w.ctx.p.pid
	}
	return b.r.SendRemote(from, pid, msg)
}
