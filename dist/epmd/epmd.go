package epmd

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultPort is the port epmd listens on unless ERL_EPMD_PORT says
// otherwise.
const DefaultPort = 4369

// Request and reply codes.
const (
	alive2Req      = 120 // 'x'
	alive2Resp     = 121 // 'y': result, 2-byte creation
	alive2XResp    = 118 // 'v': result, 4-byte creation
	portPlease2Req = 122 // 'z'
	port2Resp      = 119 // 'w'
	namesReq       = 110 // 'n'
	dumpReq        = 100 // 'd'
	killReq        = 107 // 'k'
	stopReq        = 115 // 's'
)

// Node types, protocols and versions of a registration.
const (
	NodeTypeNormal = 77 // 'M': an Erlang node
	NodeTypeHidden = 72 // 'H': a hidden node
	ProtocolTCP    = 0
	HighVersion    = 6
	LowVersion     = 5
)

// Bounds on what a peer may make this package read.
const (
	// MaxNameLen bounds a node name (the part before '@') in bytes: 255
	// characters of up to 4 UTF-8 bytes each.
	MaxNameLen = 1020
	// MaxExtraLen bounds a registration's Extra field.
	MaxExtraLen = 1024
	// maxRequest bounds a request the Server reads: an ALIVE2_REQ with the
	// largest name and Extra.
	maxRequest = 13 + MaxNameLen + MaxExtraLen
	// maxNamesReply bounds a NAMES_REQ reply the client reads.
	maxNamesReply = 1 << 20
)

// Errors. Protocol and network failures wrap ErrProtocol or the network
// error.
var (
	// ErrNotFound: the name is not registered with that epmd.
	ErrNotFound = errors.New("epmd: name not registered")
	// ErrTaken: ALIVE2 refused: the name is registered already.
	ErrTaken = errors.New("epmd: name already registered")
	// ErrProtocol: the reply is not what the protocol allows.
	ErrProtocol = errors.New("epmd: protocol error")
	// ErrBadName: the name is empty, too long, or holds an '@'.
	ErrBadName = errors.New("epmd: bad node name")
)

// Node is a registration: what ALIVE2_REQ registers and PORT2_RESP returns.
type Node struct {
	Name     string // the alive part of the node name, before the '@'
	Port     uint16 // the distribution listener's port
	Type     byte   // NodeTypeNormal or NodeTypeHidden
	Protocol byte   // ProtocolTCP
	High     uint16 // highest distribution version: HighVersion
	Low      uint16 // lowest distribution version: LowVersion
	Extra    []byte
}

func checkName(name string) error {
	if name == "" || len(name) > MaxNameLen || strings.ContainsRune(name, '@') {
		return fmt.Errorf("%w: %q", ErrBadName, name)
	}
	return nil
}

// Addr is epmd's address on host: host and the port ERL_EPMD_PORT names, or
// DefaultPort, as erl chooses it.
func Addr(host string) string {
	port := DefaultPort
	if s := os.Getenv("ERL_EPMD_PORT"); s != "" {
		if p, err := strconv.Atoi(s); err == nil && p > 0 && p < 65536 {
			port = p
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

func dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	return c, nil
}

// request frames body with its 2-byte length.
func request(body []byte) []byte {
	b := make([]byte, 2, 2+len(body))
	binary.BigEndian.PutUint16(b, uint16(len(body)))
	return append(b, body...)
}

func appendNode(b []byte, n Node) []byte {
	b = binary.BigEndian.AppendUint16(b, n.Port)
	b = append(b, n.Type, n.Protocol)
	b = binary.BigEndian.AppendUint16(b, n.High)
	b = binary.BigEndian.AppendUint16(b, n.Low)
	b = binary.BigEndian.AppendUint16(b, uint16(len(n.Name)))
	b = append(b, n.Name...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(n.Extra)))
	return append(b, n.Extra...)
}

// readNode reads the fields appendNode writes, each length checked against
// its bound before anything is allocated.
func readNode(r io.Reader) (Node, error) {
	var h [10]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Node{}, truncated(err)
	}
	n := Node{
		Port: binary.BigEndian.Uint16(h[0:]), Type: h[2], Protocol: h[3],
		High: binary.BigEndian.Uint16(h[4:]), Low: binary.BigEndian.Uint16(h[6:]),
	}
	nlen := int(binary.BigEndian.Uint16(h[8:]))
	if nlen == 0 || nlen > MaxNameLen {
		return Node{}, fmt.Errorf("%w: name length %d", ErrProtocol, nlen)
	}
	name := make([]byte, nlen+2)
	if _, err := io.ReadFull(r, name); err != nil {
		return Node{}, truncated(err)
	}
	n.Name = string(name[:nlen])
	elen := int(binary.BigEndian.Uint16(name[nlen:]))
	if elen > MaxExtraLen {
		return Node{}, fmt.Errorf("%w: extra length %d", ErrProtocol, elen)
	}
	if elen > 0 {
		n.Extra = make([]byte, elen)
		if _, err := io.ReadFull(r, n.Extra); err != nil {
			return Node{}, truncated(err)
		}
	}
	return n, nil
}

func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: reply truncated", ErrProtocol)
	}
	return err
}

// Registration is a node registered with epmd. The registration lasts as
// long as its connection: Close ends it, and so does epmd's death (Done).
// Its methods may be called from any goroutine.
type Registration struct {
	// Creation is the node's creation as epmd assigned it (its
	// incarnation: pids and refs carry it).
	Creation uint32

	conn net.Conn
	done chan struct{}
	once sync.Once
}

// Register registers n with the epmd at addr (ALIVE2_REQ) and keeps the
// connection open. ctx bounds the exchange. Errors: ErrTaken if the name
// is registered already, ErrBadName, ErrProtocol, or the network's.
func Register(ctx context.Context, addr string, n Node) (*Registration, error) {
	if err := checkName(n.Name); err != nil {
		return nil, err
	}
	if len(n.Extra) > MaxExtraLen {
		return nil, fmt.Errorf("%w: extra of %d bytes", ErrBadName, len(n.Extra))
	}
	c, err := dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	creation, err := alive2(c, n)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	r := &Registration{Creation: creation, conn: c, done: make(chan struct{})}
	go r.watch()
	return r, nil
}

func alive2(c net.Conn, n Node) (uint32, error) {
	if _, err := c.Write(request(appendNode([]byte{alive2Req}, n))); err != nil {
		return 0, err
	}
	var h [2]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return 0, truncated(err)
	}
	var creation uint32
	switch h[0] {
	case alive2XResp:
		var b [4]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return 0, truncated(err)
		}
		creation = binary.BigEndian.Uint32(b[:])
	case alive2Resp:
		var b [2]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return 0, truncated(err)
		}
		creation = uint32(binary.BigEndian.Uint16(b[:]))
	default:
		return 0, fmt.Errorf("%w: ALIVE2 reply code %d", ErrProtocol, h[0])
	}
	if h[1] != 0 {
		return 0, fmt.Errorf("%w: %q (result %d)", ErrTaken, n.Name, h[1])
	}
	return creation, nil
}

// watch waits for the connection to end: epmd sends nothing more on it, so
// a read returns only when it closes (epmd died, or Close).
func (r *Registration) watch() {
	var b [1]byte
	r.conn.Read(b[:])
	r.once.Do(func() { close(r.done) })
}

// Done is closed when the registration has ended: Close, or epmd closed the
// connection.
func (r *Registration) Done() <-chan struct{} { return r.done }

// Close ends the registration. It does not wait for the watching goroutine
// (Done closes once it has seen the connection close).
func (r *Registration) Close() error { return r.conn.Close() }

// Lookup asks the epmd at addr for name's registration (PORT_PLEASE2_REQ).
// ErrNotFound if it has none.
func Lookup(ctx context.Context, addr, name string) (Node, error) {
	if err := checkName(name); err != nil {
		return Node{}, err
	}
	c, err := dial(ctx, addr)
	if err != nil {
		return Node{}, err
	}
	defer c.Close()
	if _, err := c.Write(request(append([]byte{portPlease2Req}, name...))); err != nil {
		return Node{}, err
	}
	br := bufio.NewReader(c)
	var h [2]byte
	if _, err := io.ReadFull(br, h[:1]); err != nil {
		return Node{}, truncated(err)
	}
	if h[0] != port2Resp {
		return Node{}, fmt.Errorf("%w: PORT_PLEASE2 reply code %d", ErrProtocol, h[0])
	}
	if _, err := io.ReadFull(br, h[1:]); err != nil {
		return Node{}, truncated(err)
	}
	if h[1] != 0 {
		return Node{}, fmt.Errorf("%w: %q at %s", ErrNotFound, name, addr)
	}
	return readNode(br)
}

// Names lists the names registered with the epmd at addr (NAMES_REQ), as
// `epmd -names` prints them: "name NAME at port PORT" per line.
func Names(ctx context.Context, addr string) (map[string]int, error) {
	c, err := dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := c.Write(request([]byte{namesReq})); err != nil {
		return nil, err
	}
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return nil, truncated(err)
	}
	body, err := io.ReadAll(io.LimitReader(c, maxNamesReply+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxNamesReply {
		return nil, fmt.Errorf("%w: NAMES reply over %d bytes", ErrProtocol, maxNamesReply)
	}
	names := make(map[string]int)
	for _, line := range strings.Split(string(body), "\n") {
		var name string
		var port int
		if _, err := fmt.Sscanf(line, "name %s at port %d", &name, &port); err == nil {
			names[name] = port
		}
	}
	return names, nil
}
