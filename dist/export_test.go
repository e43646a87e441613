package dist

import (
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/handshake"
)

// SetTestHookFrame installs f as the reader's per-frame hook (see
// testHookFrame) until the returned restore is called.
func SetTestHookFrame(f func(local actor.Atom)) (restore func()) {
	testHookFrame.Store(&f)
	return func() { testHookFrame.Store(nil) }
}

// ClosingOf is closed when n's current connection to node begins to close
// (nil if there is none).
func ClosingOf(n *Node, node actor.Atom) <-chan struct{} {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if p := n.peers[node]; p != nil && p.c != nil {
		return p.c.closing
	}
	return nil
}

// SetRefusalLogWindow sets the refusal log's window for nodes started
// after it, until the returned restore is called.
func SetRefusalLogWindow(d time.Duration) (restore func()) {
	old := refusalLogWindow.Swap(int64(d))
	return func() { refusalLogWindow.Store(old) }
}

// WithoutFlags makes the nodes started until the returned restore is
// called leave flags out of what they announce.
func WithoutFlags(flags handshake.Flags) (restore func()) {
	testFlagsOff.Store(uint64(flags))
	return func() { testFlagsOff.Store(0) }
}
