package netio

import "golang.org/x/sys/unix"

// String describes the socket by its addresses, "tcp LOCAL" for a
// listener and "tcp LOCAL -> PEER" for a connection: the observer's actor
// detail shows what an actor holds by its String (actor.System.Detail).
// It takes only the socket's own lock.
func (s *sock) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sockOpen {
		return "tcp (closed)"
	}
	out := "tcp"
	if sa, err := unix.Getsockname(s.fd); err == nil {
		if a := tcpAddr(sa); a != nil {
			out += " " + a.String()
		}
	}
	if sa, err := unix.Getpeername(s.fd); err == nil {
		if a := tcpAddr(sa); a != nil {
			out += " -> " + a.String()
		}
	}
	return out
}
