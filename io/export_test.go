//go:build linux

package netio

import (
	"context"
	"net/netip"

	"github.com/colonyrt/colony/actor"
)

// Tag returns a Conn's registration (fd, generation).
func (cn *Conn) Tag() (int32, uint32) { return int32(cn.s.fd), cn.s.gen }

// FD returns the OS descriptor of a Conn's socket (on the fd backends,
// its Tag's fd; on the portable one, its net.Conn's), for tests that set
// socket options.
func (cn *Conn) FD() int {
	switch e := cn.s.ep.(type) {
	case *fdEndpoint:
		return e.fd
	case *netEndpoint:
		fd := -1
		if rc, err := e.c.SyscallConn(); err == nil {
			rc.Control(func(f uintptr) { fd = int(f) })
		}
		return fd
	}
	return -1
}

// Resolve runs the poller's generation check for (fd, gen).
func Resolve(sys *actor.System, fd int32, gen uint32) *Conn {
	pollersMu.Lock()
	p := pollers[sys]
	pollersMu.Unlock()
	if p == nil {
		return nil
	}
	if s := p.resolve(fd, gen); s != nil {
		return s.conn
	}
	return nil
}

// RegisterFD registers a raw fd (on the portable backend, a slot) for
// owner, as a Conn (double registration test). On the portable backend the
// endpoint has no connection: only the registration's refusal is tested.
func RegisterFD(sys *actor.System, owner actor.Pid, fd int) (*Conn, error) {
	var ep endpoint = &fdEndpoint{fd}
	if sysFamily(sys) == famNet {
		ep = &netEndpoint{slot: fd, fd: -1, demand: make(chan struct{}, 1)}
	}
	return newConnSock(sys, owner, ep, fd)
}

// PollerRunning reports whether sys has a live poller goroutine.
func PollerRunning(sys *actor.System) bool {
	pollersMu.Lock()
	p := pollers[sys]
	pollersMu.Unlock()
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.dead
}

// HoldMu takes the socket's lock, as the poller does to service it, and
// returns the unlock.
func (cn *Conn) HoldMu() (unlock func()) {
	cn.s.mu.Lock()
	return cn.s.mu.Unlock
}

// WakeWaiterLocked does what the poller does for a blocked Recv that its
// readiness satisfies (serviceLocked): clear the waiter and send its
// ioReady to the owner. The caller holds the lock (HoldMu). It reports
// whether there was a waiter.
func (cn *Conn) WakeWaiterLocked() bool {
	s := cn.s
	w := s.w
	if w == nil {
		return false
	}
	s.w = nil
	s.fireLocked(w)
	return true
}

// OnWaitFailed makes a blocked Recv on cn that times out or fails call f
// just before it takes the socket's lock back; the returned func removes
// the hook. Only cn's waits count: a socket another test left behind (a
// plain goroutine's Recv timing out later) fired it too, and the test then
// went on before its own Recv had timed out.
func OnWaitFailed(cn *Conn, f func()) (restore func()) {
	h := func(s *sock) {
		if s == cn.s {
			f()
		}
	}
	testHookWaitFailed.Store(&h)
	return func() { testHookWaitFailed.Store(nil) }
}

// SendWaiters returns how many SendWait calls wait on cn.
func (cn *Conn) SendWaiters() int {
	cn.s.mu.Lock()
	defer cn.s.mu.Unlock()
	return len(cn.s.sw)
}

// WakeSendersLocked does what the poller does when it has written cn's
// queue down to the low watermark: fire every SendWait waiter. The caller
// holds the lock (HoldMu). It returns how many it woke.
func (cn *Conn) WakeSendersLocked() int {
	n := len(cn.s.sw)
	cn.s.wakeSendersLocked()
	return n
}

// SetLookup replaces the name lookup of Dial until the returned restore.
func SetLookup(f func(ctx context.Context, network, host string) ([]netip.Addr, error)) (restore func()) {
	old := lookupNetIP
	lookupNetIP = f
	return func() { lookupNetIP = old }
}

// DialWaiters returns how many of sys's sockets have a Dial waiting for
// its connect (the owner's wait, for writability): such a Dial has taken
// its owner's hold and dropped the socket's lock.
func DialWaiters(sys *actor.System) int {
	pollersMu.Lock()
	p := pollers[sys]
	pollersMu.Unlock()
	if p == nil {
		return 0
	}
	p.mu.Lock()
	socks := p.table.all()
	p.mu.Unlock()
	n := 0
	for _, s := range socks { // sock.mu after poller.mu is released: the lock order
		s.mu.Lock()
		if s.w != nil && s.w.write {
			n++
		}
		s.mu.Unlock()
	}
	return n
}

// RecvWaiting reports whether the owner of cn waits in Recv or Accept (its
// readiness wait is registered; the socket's lock is dropped or about to
// be).
func (cn *Conn) RecvWaiting() bool {
	cn.s.mu.Lock()
	defer cn.s.mu.Unlock()
	return cn.s.w != nil && !cn.s.w.write
}
