// Package handshake is the Erlang distribution handshake, version 6
// (HANDSHAKE_23), both sides: the initiator (Dial, node A of the erts
// guide) and the acceptor (Accept, node B), with the cookie's MD5
// challenge, the status replies and the flags OTP 25 and 26 make
// mandatory.
//
// # The exchange
//
// Every message is a 2-byte big-endian length and that many bytes, the
// first a tag:
//
//	A -> B  'N' Flags(8) Creation(4) Nlen(2) Name     send_name (version 6)
//	        ('n' Version(2) Flags(4) Name: the version 5 name, accepted from
//	        a peer that sets HANDSHAKE_23; it then sends a complement)
//	B -> A  's' Status                                  recv_status
//	        (Status "alive": A answers 's' "true" or "false")
//	B -> A  'N' Flags(8) Challenge(4) Creation(4) Nlen(2) Name
//	A -> B  'c' FlagsHigh(4) Creation(4)                only after an 'n' name
//	A -> B  'r' Challenge(4) Digest(16)                 A's digest of B's challenge
//	B -> A  'a' Digest(16)                              B's digest of A's challenge
//
// A digest is MD5(cookie ++ decimal(challenge)). B checks A's digest before
// it answers; A checks B's, so a wrong cookie is refused on both sides.
//
// # Bounds
//
// A message is read only after its length has been checked against
// MaxMessage (a name of 255 four-byte characters and the fixed fields), so
// a peer cannot make either side allocate more; a name must be a valid
// UTF-8 "alive@host" of at most 255 characters. Any violation is an error
// wrapping ErrProtocol; the caller closes the connection. The caller also
// bounds the time (a deadline on the connection): the handshake itself
// waits as long as reads do.
package handshake

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Version is the distribution protocol version this package speaks.
const Version = 6

// MaxMessage bounds one handshake message: the version 6 challenge (19
// bytes of fixed fields) with a name of 255 four-byte characters.
const MaxMessage = 19 + 4*255

// Status is a recv_status reply.
type Status string

// The status replies.
const (
	// StatusOK: the handshake continues.
	StatusOK Status = "ok"
	// StatusOKSimultaneous: it continues, and B drops its own attempt to
	// connect to A (A's name is greater).
	StatusOKSimultaneous Status = "ok_simultaneous"
	// StatusNok: B has an attempt of its own under way that wins (B's name
	// is greater); A gives up this one.
	StatusNok Status = "nok"
	// StatusNotAllowed: B refuses A.
	StatusNotAllowed Status = "not_allowed"
	// StatusAlive: B has a connection to A already; A says whether to go
	// on (its old connection is dead) or not.
	StatusAlive Status = "alive"
)

// Errors. Every error Dial or Accept returns wraps one of them, or is the
// connection's own.
var (
	// ErrProtocol: the peer broke the protocol (a malformed, oversized or
	// unexpected message, a bad name).
	ErrProtocol = errors.New("handshake: protocol error")
	// ErrCookie: the peer's digest does not match this node's cookie.
	ErrCookie = errors.New("handshake: invalid challenge reply (wrong cookie)")
	// ErrFlags: the peer lacks flags this node requires.
	ErrFlags = errors.New("handshake: peer lacks mandatory flags")
	// ErrRefused: the acceptor answered a status that ends the handshake
	// (nok, not_allowed, or a peer that said false to alive). Errors that
	// wrap it are *RefusedError.
	ErrRefused = errors.New("handshake: refused")
)

// RefusedError is the status that ended a handshake.
type RefusedError struct{ Status Status }

func (e *RefusedError) Error() string { return "handshake: refused: " + string(e.Status) }

// Unwrap makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Config is one node's side of handshakes. It is read, not written, by Dial
// and Accept, and may be shared by concurrent handshakes.
type Config struct {
	// Name is this node's full name, "alive@host".
	Name string
	// Creation is this node's creation (from EPMD).
	Creation uint32
	// Cookie is the shared secret: the bytes digested. An Erlang node's
	// are its cookie atom's characters as bytes, that is Latin-1 (package
	// dist passes a Config.Cookie so).
	Cookie string
	// Flags are the flags this node announces.
	Flags Flags
	// Required are the flags a peer must announce (after its
	// MANDATORY_25_DIGEST is expanded). Zero: Mandatory.
	Required Flags
	// Rand is the source of challenges. Nil: crypto/rand.
	Rand io.Reader
}

// Peer is what a handshake learned of the other node.
type Peer struct {
	Name     string
	Creation uint32
	// Flags are the flags the peer announced (its MANDATORY_25_DIGEST
	// expanded).
	Flags Flags
	// Version is the version of the peer's name message: 6, or 5 for a
	// peer that sent the old name and a complement (Accept only).
	Version int
	// Replaces is set by Accept when it answered alive and the peer said
	// true: the caller's old connection to the peer is dead, and this one
	// takes its place.
	Replaces bool
}

func (c *Config) required() Flags {
	if c.Required == 0 {
		return Mandatory
	}
	return c.Required
}

func (c *Config) challenge() (uint32, error) {
	r := c.Rand
	if r == nil {
		r = rand.Reader
	}
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b[:]), nil
}

// Digest is MD5(cookie ++ decimal(challenge)), as both sides compute it.
func Digest(challenge uint32, cookie string) [16]byte {
	return md5.Sum([]byte(cookie + strconv.FormatUint(uint64(challenge), 10)))
}

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// CheckName reports whether s is a node name a peer may use: valid UTF-8
// "alive@host", both parts non-empty, at most 255 characters.
func CheckName(s string) error {
	i := strings.IndexByte(s, '@')
	switch {
	case !utf8.ValidString(s):
		return protoErr("node name is not valid UTF-8")
	case utf8.RuneCountInString(s) > 255:
		return protoErr("node name of %d characters", utf8.RuneCountInString(s))
	case i <= 0 || i == len(s)-1 || strings.IndexByte(s[i+1:], '@') >= 0:
		return protoErr("node name %q is not alive@host", s)
	}
	return nil
}

// readMsg reads one length-prefixed message, its length checked first.
func readMsg(r io.Reader, buf *[MaxMessage]byte) ([]byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, truncated(err)
	}
	n := int(binary.BigEndian.Uint16(h[:]))
	if n == 0 || n > MaxMessage {
		return nil, protoErr("message of %d bytes", n)
	}
	b := buf[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, truncated(err)
	}
	return b, nil
}

// ErrClosed: the peer closed the connection mid-handshake (before its
// last message, perhaps before its first). Errors that wrap it also wrap
// ErrProtocol.
var ErrClosed = errors.New("connection closed mid-handshake")

func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: %w", ErrProtocol, ErrClosed)
	}
	return err
}

func writeMsg(w io.Writer, body []byte) error {
	b := make([]byte, 2, 2+len(body))
	binary.BigEndian.PutUint16(b, uint16(len(body)))
	_, err := w.Write(append(b, body...))
	return err
}

// ParseName parses a send_name message, tag included: the version 6 'N'
// form, or the version 5 'n' form (Peer.Version 5, no creation).
func ParseName(b []byte) (Peer, error) {
	if len(b) == 0 {
		return Peer{}, protoErr("empty name message")
	}
	var p Peer
	var name []byte
	switch b[0] {
	case 'N':
		if len(b) < 15 {
			return Peer{}, protoErr("name message of %d bytes", len(b))
		}
		p.Flags = Flags(binary.BigEndian.Uint64(b[1:]))
		p.Creation = binary.BigEndian.Uint32(b[9:])
		nlen := int(binary.BigEndian.Uint16(b[13:]))
		if nlen != len(b)-15 {
			return Peer{}, protoErr("name length %d in a message of %d bytes", nlen, len(b))
		}
		name, p.Version = b[15:], 6
	case 'n':
		if len(b) < 7 {
			return Peer{}, protoErr("name message of %d bytes", len(b))
		}
		p.Version = int(binary.BigEndian.Uint16(b[1:]))
		p.Flags = Flags(binary.BigEndian.Uint32(b[3:]))
		name = b[7:]
		if p.Version != 5 && p.Version != 6 {
			return Peer{}, protoErr("version %d", p.Version)
		}
		p.Version = 5
	default:
		return Peer{}, protoErr("name message tag %q", b[0])
	}
	p.Flags = p.Flags.expand()
	p.Name = string(name)
	if err := CheckName(p.Name); err != nil {
		return Peer{}, err
	}
	return p, nil
}

// ParseChallenge parses a version 6 challenge message ('N'), tag included.
func ParseChallenge(b []byte) (p Peer, challenge uint32, err error) {
	if len(b) < 19 || b[0] != 'N' {
		return Peer{}, 0, protoErr("challenge message of %d bytes", len(b))
	}
	p.Flags = Flags(binary.BigEndian.Uint64(b[1:])).expand()
	challenge = binary.BigEndian.Uint32(b[9:])
	p.Creation = binary.BigEndian.Uint32(b[13:])
	nlen := int(binary.BigEndian.Uint16(b[17:]))
	if nlen != len(b)-19 {
		return Peer{}, 0, protoErr("name length %d in a challenge of %d bytes", nlen, len(b))
	}
	p.Name, p.Version = string(b[19:]), 6
	if err := CheckName(p.Name); err != nil {
		return Peer{}, 0, err
	}
	return p, challenge, nil
}

func missing(have, want Flags) error {
	if m := want &^ have; m != 0 {
		return fmt.Errorf("%w: %v", ErrFlags, m)
	}
	return nil
}

// Dial runs the initiator's side over rw as node cfg.Name connecting to
// node peer. It returns the peer when both digests matched. A status other
// than ok, ok_simultaneous or alive is a *RefusedError. To alive (the peer
// has a connection to this node already) it answers what pending says:
// true if this attempt is still the node's only one, so the peer's
// connection is stale; false if a connection from the peer has come up
// meanwhile (a simultaneous connect the peer's side won), and Dial then
// returns a *RefusedError. A nil pending always says true.
func Dial(rw io.ReadWriter, cfg *Config, peer string, pending func() bool) (Peer, error) {
	var buf [MaxMessage]byte
	name := binary.BigEndian.AppendUint64([]byte{'N'}, uint64(cfg.Flags))
	name = binary.BigEndian.AppendUint32(name, cfg.Creation)
	name = binary.BigEndian.AppendUint16(name, uint16(len(cfg.Name)))
	if err := writeMsg(rw, append(name, cfg.Name...)); err != nil {
		return Peer{}, err
	}
	// recv_status
	b, err := readMsg(rw, &buf)
	if err != nil {
		return Peer{}, err
	}
	if b[0] != 's' {
		return Peer{}, protoErr("status message tag %q", b[0])
	}
	switch st := Status(b[1:]); st {
	case StatusOK, StatusOKSimultaneous:
	case StatusAlive:
		if pending != nil && !pending() {
			writeMsg(rw, []byte("sfalse"))
			return Peer{}, &RefusedError{st}
		}
		if err := writeMsg(rw, []byte("strue")); err != nil {
			return Peer{}, err
		}
	case StatusNok, StatusNotAllowed:
		return Peer{}, &RefusedError{st}
	default:
		return Peer{}, protoErr("status %q", truncate(string(st)))
	}
	// recv_challenge
	if b, err = readMsg(rw, &buf); err != nil {
		return Peer{}, err
	}
	p, challenge, err := ParseChallenge(b)
	if err != nil {
		return Peer{}, err
	}
	if p.Name != peer {
		return Peer{}, protoErr("dialled %s, which says it is %s", peer, p.Name)
	}
	if err := missing(p.Flags, cfg.required()); err != nil {
		return Peer{}, err
	}
	// send_challenge_reply
	mine, err := cfg.challenge()
	if err != nil {
		return Peer{}, err
	}
	d := Digest(challenge, cfg.Cookie)
	reply := binary.BigEndian.AppendUint32([]byte{'r'}, mine)
	if err := writeMsg(rw, append(reply, d[:]...)); err != nil {
		return Peer{}, err
	}
	// recv_challenge_ack
	if b, err = readMsg(rw, &buf); err != nil {
		if errors.Is(err, ErrProtocol) && errors.Is(err, ErrClosed) {
			// A peer that refuses our digest closes without a word.
			return Peer{}, fmt.Errorf("%w: %s closed the connection instead of acknowledging our digest (its cookie differs)", ErrCookie, peer)
		}
		return Peer{}, err
	}
	if len(b) != 17 || b[0] != 'a' {
		return Peer{}, protoErr("challenge ack of %d bytes, tag %q", len(b), b[0])
	}
	if want := Digest(mine, cfg.Cookie); !bytes.Equal(b[1:], want[:]) {
		return Peer{}, ErrCookie
	}
	return p, nil
}

// Accept runs the acceptor's side over rw. decide is called once, with the
// peer's name message parsed, before any reply; it returns the status to
// answer (the node's view: a connection up already, or an attempt of its
// own under way). A peer that lacks the required flags is answered
// not_allowed without asking decide. On StatusAlive the peer's answer
// decides: true goes on (Peer.Replaces), false ends with a *RefusedError.
// Any status but ok, ok_simultaneous and alive ends the handshake at once
// with a *RefusedError after it is sent.
func Accept(rw io.ReadWriter, cfg *Config, decide func(Peer) Status) (Peer, error) {
	var buf [MaxMessage]byte
	b, err := readMsg(rw, &buf)
	if err != nil {
		return Peer{}, err
	}
	p, err := ParseName(b)
	if err != nil {
		return Peer{}, err
	}
	req := cfg.required()
	if p.Version == 5 {
		req &= 0xffffffff // the high half comes in the complement
	}
	if err := missing(p.Flags, req); err != nil {
		writeMsg(rw, []byte("s"+StatusNotAllowed))
		return p, err
	}
	st := decide(p)
	if err := writeMsg(rw, []byte("s"+st)); err != nil {
		return p, err
	}
	switch st {
	case StatusOK, StatusOKSimultaneous:
	case StatusAlive:
		if b, err = readMsg(rw, &buf); err != nil {
			return p, err
		}
		switch string(b) {
		case "strue":
			p.Replaces = true
		case "sfalse":
			return p, &RefusedError{StatusAlive}
		default:
			return p, protoErr("answer to alive %q", truncate(string(b)))
		}
	default:
		return p, &RefusedError{st}
	}
	// send_challenge (always the version 6 form: the peer has HANDSHAKE_23)
	mine, err := cfg.challenge()
	if err != nil {
		return p, err
	}
	ch := binary.BigEndian.AppendUint64([]byte{'N'}, uint64(cfg.Flags))
	ch = binary.BigEndian.AppendUint32(ch, mine)
	ch = binary.BigEndian.AppendUint32(ch, cfg.Creation)
	ch = binary.BigEndian.AppendUint16(ch, uint16(len(cfg.Name)))
	if err := writeMsg(rw, append(ch, cfg.Name...)); err != nil {
		return p, err
	}
	if b, err = readMsg(rw, &buf); err != nil {
		return p, err
	}
	// send_complement, after a version 5 name
	if p.Version == 5 {
		if len(b) != 9 || b[0] != 'c' {
			return p, protoErr("complement of %d bytes, tag %q", len(b), b[0])
		}
		p.Flags |= Flags(binary.BigEndian.Uint32(b[1:])) << 32
		p.Creation = binary.BigEndian.Uint32(b[5:])
		if err := missing(p.Flags, cfg.required()); err != nil {
			return p, err
		}
		if b, err = readMsg(rw, &buf); err != nil {
			return p, err
		}
	}
	// recv_challenge_reply
	if len(b) != 21 || b[0] != 'r' {
		return p, protoErr("challenge reply of %d bytes, tag %q", len(b), b[0])
	}
	theirs := binary.BigEndian.Uint32(b[1:])
	if want := Digest(mine, cfg.Cookie); !bytes.Equal(b[5:21], want[:]) {
		return p, ErrCookie
	}
	// send_challenge_ack
	d := Digest(theirs, cfg.Cookie)
	if err := writeMsg(rw, append([]byte{'a'}, d[:]...)); err != nil {
		return p, err
	}
	return p, nil
}

// truncate shortens a peer's string for an error message.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
