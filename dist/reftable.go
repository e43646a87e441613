package dist

import (
	"sync"

	"github.com/colonyrt/colony/dist/etf"
)

// refTable holds a node's outstanding requests of one kind by their
// reference: its outgoing gen_server calls (call.go) and spawn requests
// (spawn.go). A request is added by its requester before it goes out and
// taken once, by whichever comes first of its reply, its requester's
// cancel and its connection's end; the others find nothing (take's zero
// result) and know they lost.
//
// Locks: mu is a leaf: nothing else is locked while it is held.
type refTable[V comparable] struct {
	mu sync.Mutex
	m  map[etf.Ref]V // guarded by mu; nil until the first add
}

// add puts v under ref.
func (t *refTable[V]) add(ref etf.Ref, v V) {
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[etf.Ref]V)
	}
	t.m[ref] = v
	t.mu.Unlock()
}

// take removes what is under ref and returns it (the zero V if nothing).
func (t *refTable[V]) take(ref etf.Ref) V {
	t.mu.Lock()
	v := t.m[ref]
	delete(t.m, ref)
	t.mu.Unlock()
	return v
}

// takeIf removes v from under ref, if it is still there, and reports
// whether it was.
func (t *refTable[V]) takeIf(ref etf.Ref, v V) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if got, ok := t.m[ref]; !ok || got != v {
		return false
	}
	delete(t.m, ref)
	return true
}

// has reports whether something is under ref.
func (t *refTable[V]) has(ref etf.Ref) bool {
	t.mu.Lock()
	_, ok := t.m[ref]
	t.mu.Unlock()
	return ok
}
