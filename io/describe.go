package netio

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
	if a := s.ep.localAddr(); a != nil {
		out += " " + a.String()
	}
	if a := s.ep.remoteAddr(); a != nil {
		out += " -> " + a.String()
	}
	return out
}
