package epmd

// Server: an EPMD-compatible registrar in the process.
//
// A node started on a machine where no epmd runs serves the registrar
// itself, so that other nodes on the machine (Colony or Erlang, which
// looks for epmd on the same port) find it. It implements what nodes use:
// ALIVE2_REQ (the registration lasts as long as its connection),
// PORT_PLEASE2_REQ and NAMES_REQ; KILL_REQ, STOP_REQ and DUMP_REQ are
// refused by closing the connection (a registrar inside a node is not
// something a peer may stop). It dies with the node that serves it, and its
// registrations with it: that is the price of not exec'ing a daemon, and
// why a node prefers a running epmd (see package dist's EPMD choice).
//
// Each connection has one goroutine; a request must arrive within
// requestTimeout and is at most maxRequest bytes, and at most maxConns
// connections are served at once, so a client that connects and says
// nothing, or sends a huge length, holds nothing for long.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"sync"
	"time"
)

const (
	requestTimeout = 10 * time.Second
	maxConns       = 1024
)

// Server is a running registrar. Close stops it.
type Server struct {
	l  net.Listener
	wg sync.WaitGroup

	mu       sync.Mutex // guards the fields below
	nodes    map[string]Node
	conns    map[net.Conn]struct{}
	creation uint32 // the last creation handed out
	closed   bool
}

// Serve serves the registrar on l until Close. It takes ownership of l.
func Serve(l net.Listener) *Server {
	s := &Server{
		l: l, nodes: make(map[string]Node), conns: make(map[net.Conn]struct{}),
		creation: rand.Uint32(),
	}
	s.wg.Add(1)
	go s.accept()
	return s
}

// Addr is the address the registrar listens on.
func (s *Server) Addr() net.Addr { return s.l.Addr() }

// Close stops the registrar: the listener and every connection are closed
// (every registration ends) and Close returns once its goroutines have.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.l.Close()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return // closed
		}
		s.mu.Lock()
		if s.closed || len(s.conns) >= maxConns {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	c.SetReadDeadline(time.Now().Add(requestTimeout))
	req, err := readRequest(c)
	if err != nil {
		return
	}
	switch req[0] {
	case alive2Req:
		s.alive2(c, req[1:])
	case portPlease2Req:
		s.portPlease(c, string(req[1:]))
	case namesReq:
		s.names(c)
	default: // KILL, STOP, DUMP and anything else: refused
	}
}

func readRequest(r io.Reader) ([]byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(h[:]))
	if n == 0 || n > maxRequest {
		return nil, fmt.Errorf("%w: request of %d bytes", ErrProtocol, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

func (s *Server) alive2(c net.Conn, body []byte) {
	n, err := readNode(bytes.NewReader(body))
	if err != nil || checkName(n.Name) != nil {
		return
	}
	s.mu.Lock()
	_, taken := s.nodes[n.Name]
	var creation uint32
	if !taken && !s.closed {
		s.creation++
		if s.creation == 0 { // 0 is no creation
			s.creation++
		}
		creation = s.creation
		s.nodes[n.Name] = n
	}
	s.mu.Unlock()
	var reply []byte
	result := byte(0)
	if taken {
		result = 1
	}
	if n.High >= 6 {
		reply = binary.BigEndian.AppendUint32([]byte{alive2XResp, result}, creation)
	} else {
		reply = binary.BigEndian.AppendUint16([]byte{alive2Resp, result}, uint16(creation))
	}
	if _, err := c.Write(reply); err != nil || taken {
		if !taken {
			s.unregister(n.Name)
		}
		return
	}
	// Registered: the registration lasts until the connection closes.
	c.SetReadDeadline(time.Time{})
	io.Copy(io.Discard, c)
	s.unregister(n.Name)
}

func (s *Server) unregister(name string) {
	s.mu.Lock()
	delete(s.nodes, name)
	s.mu.Unlock()
}

func (s *Server) portPlease(c net.Conn, name string) {
	s.mu.Lock()
	n, ok := s.nodes[name]
	s.mu.Unlock()
	if !ok {
		c.Write([]byte{port2Resp, 1})
		return
	}
	c.Write(appendNode([]byte{port2Resp, 0}, n))
}

func (s *Server) names(c net.Conn) {
	s.mu.Lock()
	lines := make([]string, 0, len(s.nodes))
	for name, n := range s.nodes {
		lines = append(lines, fmt.Sprintf("name %s at port %d\n", name, n.Port))
	}
	s.mu.Unlock()
	sort.Strings(lines)
	var port uint32
	if a, ok := s.l.Addr().(*net.TCPAddr); ok {
		port = uint32(a.Port)
	}
	c.Write(append(binary.BigEndian.AppendUint32(nil, port), strings.Join(lines, "")...))
}
