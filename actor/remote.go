package actor

// Remote pids and the remote route.
//
// A Pid's node field says who issued it. Local Systems take node numbers
// from nodeSeq, counting up from 1. A node number with remoteBit set names a
// node reached through distribution (an Erlang node, or a Colony System in
// another process) by its index in remoteNodes, the process-wide table of
// remote node identities (name, creation); such a pid's idx and gen hold the
// Erlang pid's ID and Serial words. So a remote pid is still a 12-byte
// comparable value, and two decodings of one remote pid are ==.
//
// The table only grows: an identity keeps its index for the life of the
// process, so a pid never changes meaning. Its identities come from the
// network (every pid in a peer's terms names a node), so it is bounded:
// past maxRemoteNodes distinct identities RemotePid refuses with
// ErrTooManyNodes rather than let a peer grow it without end. A real
// cluster stays far below: one entry per node incarnation it has seen.
//
// The route costs a System without distribution nothing: Send looks a pid
// up in its own slab first, and only a pid that lookup refuses reaches
// sendRemote, which loads the installed Remote once.

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// remoteBit marks a node number that indexes remoteNodes. nodeSeq would need
// 2^31 Systems started in one process to reach it.
const remoteBit = 1 << 31

// maxRemoteNodes bounds remoteNodes (see the note above).
const maxRemoteNodes = 1 << 16

// ErrTooManyNodes: RemotePid was asked for a node identity past the
// process-wide bound on remote node identities (65,536).
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

// remoteNodes is the table of remote node identities. Guarded by mu; byIdx
// is append-only and an index, once handed out, never changes meaning.
var remoteNodes struct {
	mu    sync.RWMutex
	byKey map[nodeKey]uint32
	byIdx []nodeKey
}

// RemotePid returns the pid that names actor (id.ID, id.Serial) of node
// (id.Node, id.Creation). It is the same value every time for the same
// RemoteID. Errors: ErrBadPid for an empty node name, ErrTooManyNodes past
// the table's bound.
func RemotePid(id RemoteID) (Pid, error) {
	if id.Node == "" {
		return Pid{}, fmt.Errorf("%w: empty node name", ErrBadPid)
	}
	k := nodeKey{id.Node, id.Creation}
	remoteNodes.mu.RLock()
	n, ok := remoteNodes.byKey[k]
	remoteNodes.mu.RUnlock()
	if !ok {
		remoteNodes.mu.Lock()
		if n, ok = remoteNodes.byKey[k]; !ok {
			if len(remoteNodes.byIdx) >= maxRemoteNodes {
				remoteNodes.mu.Unlock()
				return Pid{}, ErrTooManyNodes
			}
			if remoteNodes.byKey == nil {
				remoteNodes.byKey = make(map[nodeKey]uint32)
			}
			n = uint32(len(remoteNodes.byIdx))
			remoteNodes.byIdx = append(remoteNodes.byIdx, k)
			remoteNodes.byKey[k] = n
		}
		remoteNodes.mu.Unlock()
	}
	return Pid{node: remoteBit | n, idx: id.ID, gen: id.Serial}, nil
}

// IsRemote reports whether p names an actor of another node (one made by
// RemotePid).
func (p Pid) IsRemote() bool { return p.node&remoteBit != 0 }

// Remote returns the identity of a remote pid; ok is false for a pid of a
// local System or the zero Pid.
func (p Pid) Remote() (id RemoteID, ok bool) {
	if !p.IsRemote() {
		return RemoteID{}, false
	}
	remoteNodes.mu.RLock()
	defer remoteNodes.mu.RUnlock()
	i := p.node &^ remoteBit
	if int(i) >= len(remoteNodes.byIdx) {
		return RemoteID{}, false
	}
	k := remoteNodes.byIdx[i]
	return RemoteID{Node: k.name, Creation: k.creation, ID: p.idx, Serial: p.gen}, true
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
