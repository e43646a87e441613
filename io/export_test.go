package netio

import (
	"github.com/colonyrt/colony/actor"
)

// Tag returns a Conn's registration (fd, generation).
func (cn *Conn) Tag() (int32, uint32) { return int32(cn.s.fd), cn.s.gen }

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

// RegisterFD registers a raw fd for owner, as a Conn (double registration test).
func RegisterFD(sys *actor.System, owner actor.Pid, fd int) (*Conn, error) {
	return newConnSock(sys, owner, fd)
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
