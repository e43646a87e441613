package dist

// The connection's wire format, after the handshake (erts guide
// "Distribution Protocol", "Protocol between connected nodes", and
// "External Term Format", "Distribution Header").
//
// Every frame is a 4-byte big-endian length and that many bytes; a frame of
// length 0 is a tick. A frame's body is one of
//
//	112 ('p') | 131 Control | [131 Message]      pass-through, no header
//	131 68 ('D') | N | Flags | Refs | Control | [Message]
//	131 69 ('E') | Seq(8) | FragID(8) | N | Flags | Refs | fragment
//	131 70 ('F') | Seq(8) | FragID(8) | fragment
//
// where the terms after a header have no version byte, N (0..255) is the
// number of atom cache references the terms use (ATOM_CACHE_REF i names the
// header's i-th), Flags holds a half byte per reference (bit 3: a new cache
// entry, bits 0..2: the cache segment) and one more half byte (bit 0: atom
// lengths are 2 bytes), and each reference is its index in the segment
// (one byte) followed, for a new entry, by the atom's length and text. The
// cache is the peer's: 2048 entries per connection, set by the peer, read
// by us. A fragmented message is its 'E' frame and then 'F' frames of the
// same Seq, FragID counting down to 1; its header applies to the whole.
//
// What this node sends: 'D' frames with no atom cache references (N = 0, so
// no Flags) when the connection has DIST_HDR_ATOM_CACHE or FRAGMENTS (OTP
// 25 takes pass-through frames only from a peer with neither: "Got message
// from incompatible erlang"), else 'p' frames. When the connection has
// FRAGMENTS, a message whose part after the control message exceeds
// fragmentSize goes as an 'E' frame with the whole control message and
// the first fragmentSize bytes of the rest, then 'F' frames of at most
// fragmentSize bytes: only the message part may be split (OTP decodes the
// control message from the first fragment alone). Exit signals go in
// their PAYLOAD_ forms when the connection has EXIT_PAYLOAD, so a large
// exit reason is message part, and fragmented.
//
// This node does not announce DIST_HDR_ATOM_CACHE, so OTP sends it no
// cache references ('p' frames, or 'D', 'E' and 'F' with N = 0); a header
// with references, from a peer that sends them anyway, is parsed and its
// cache kept; the decoder gets the header's table of the frame
// (etf.Decoder.AtomRefs, in which '' is an atom, as in OTP's REG_SEND).
//
// Bounds: a frame's length is checked against MaxMessage before it is read,
// and the frame is read as it arrives (assembly), so a length that lies
// costs at most 4 times what was sent, not what was claimed. Partly
// received fragmented messages of one connection total at most MaxMessage
// bytes, and at most maxSequences are open at once. Past MaxMessage a send
// is dropped and the connection kept; anything else closes it
// (oversize.go).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/handshake"
)

const (
	passThrough   = 112
	versionMagic  = 131
	distHeader    = 68 // 'D'
	fragHeader    = 69 // 'E'
	fragCont      = 70 // 'F'
	fragmentSize  = 64 << 10
	readChunk     = 1 << 20   // how much of a large frame is allocated ahead of its bytes
	smallFrame    = 128 << 10 // a fragment of 64 KiB and its header fit: fragments are not allocated one by one
	maxSequences  = 64
	atomCacheSize = 2048
)

// ErrProtocol: the peer sent bytes the protocol does not allow after the
// handshake (a malformed header or term, an unknown control message, a
// message past MaxMessage that is not a send). The connection is closed.
var ErrProtocol = errors.New("dist: protocol error")

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// frameReader reads frames from one connection. Owned by the connection's
// reader goroutine.
type frameReader struct {
	r   io.Reader
	max int
	buf []byte // reused for frames up to smallFrame
}

// next reads one frame and returns its body, empty for a tick. A frame of
// at most smallFrame bytes is read into fr's buffer, valid until the next
// call; a larger one into a buffer of its own (owned), allocated as its
// bytes arrive (assembly). A frame longer than max is not read whole: its
// first bytes (at most smallFrame) are returned, and over is the number of
// its bytes still unread, which the caller skips (skip) or gives up on.
func (fr *frameReader) next() (body []byte, owned bool, over int, err error) {
	var h [4]byte
	if _, err := io.ReadFull(fr.r, h[:]); err != nil {
		return nil, false, 0, err
	}
	n := int(binary.BigEndian.Uint32(h[:]))
	if n == 0 {
		return nil, false, 0, nil
	}
	if n <= smallFrame || n > fr.max {
		if fr.buf == nil {
			fr.buf = make([]byte, smallFrame)
		}
		b := fr.buf[:min(n, smallFrame)]
		if _, err := io.ReadFull(fr.r, b); err != nil {
			return nil, false, 0, unexpected(err)
		}
		return b, false, n - len(b), nil
	}
	a := assembly{hint: n}
	for a.n < n {
		m, err := io.ReadFull(fr.r, a.space(min(n-a.n, readChunk)))
		a.commit(m)
		if err != nil {
			return nil, false, 0, unexpected(err)
		}
	}
	return a.bytes(), true, 0, nil
}

// skip reads and drops the next n bytes (the rest of a frame past max).
func (fr *frameReader) skip(n int) error {
	_, err := io.CopyN(io.Discard, fr.r, int64(n))
	return unexpected(err)
}

// assembly collects a large message's bytes as they arrive and returns them
// in one buffer. The buffer is sized by hint (a frame's length, or the
// size its fragments announce), which is the peer's claim: it is allocated
// only once a quarter of hint has come, the bytes before it kept in chunks
// of at most readChunk bytes and copied in. So what a peer makes this node
// allocate is at most 4 times (what it sent + readChunk), and a message of
// hint bytes peaks at 1.25 times its size, where growing one buffer by
// doubling peaked at 3 (the old buffer, the new one, and the garbage of
// the ones before). Past hint (fragments that sent more than they said),
// the buffer grows as append grows it.
type assembly struct {
	hint   int
	n      int      // bytes so far
	chunks [][]byte // the bytes before buf
	buf    []byte
}

// space returns room for k more bytes (k > 0); commit(m) takes the first m.
func (a *assembly) space(k int) []byte {
	if a.buf == nil && (a.n+k)*4 >= a.hint {
		a.buf = make([]byte, 0, max(a.hint, a.n+k))
		for _, c := range a.chunks {
			a.buf = append(a.buf, c...)
		}
		a.chunks = nil
	}
	if a.buf != nil {
		a.buf = slices.Grow(a.buf, k)
		return a.buf[len(a.buf) : len(a.buf)+k]
	}
	last := len(a.chunks) - 1
	if last < 0 || cap(a.chunks[last])-len(a.chunks[last]) < k {
		a.chunks = append(a.chunks, make([]byte, 0, max(k, min(readChunk, a.hint-a.n))))
		last++
	}
	c := a.chunks[last]
	return c[len(c) : len(c)+k]
}

func (a *assembly) commit(m int) {
	if a.buf != nil {
		a.buf = a.buf[:len(a.buf)+m]
	} else if m > 0 {
		last := len(a.chunks) - 1
		a.chunks[last] = a.chunks[last][:len(a.chunks[last])+m]
	}
	a.n += m
}

// write appends p.
func (a *assembly) write(p []byte) {
	for len(p) > 0 {
		k := min(len(p), readChunk)
		copy(a.space(k), p[:k])
		a.commit(k)
		p = p[k:]
	}
}

// first returns the first bytes written (at least the first write's, up
// to readChunk).
func (a *assembly) first() []byte {
	if a.buf != nil {
		return a.buf
	}
	if len(a.chunks) > 0 {
		return a.chunks[0]
	}
	return nil
}

// bytes returns all the bytes written, in one slice.
func (a *assembly) bytes() []byte {
	if a.buf == nil {
		a.buf = make([]byte, 0, a.n)
		for _, c := range a.chunks {
			a.buf = append(a.buf, c...)
		}
		a.chunks = nil
	}
	return a.buf
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// atomRefs is the atom cache state of one connection's input: the peer's
// cache, and the table of the message being decoded (ATOM_CACHE_REF i is
// refs[i]), handed to the Decoder as its AtomRefs.
type atomRefs struct {
	cache [atomCacheSize]actor.Atom
	set   [atomCacheSize]bool // cache entries the peer has set ('' is an atom)
	refs  [atomCacheSize]actor.Atom
	nrefs int // entries of refs set by the last header
}

// header parses the atom cache part of a 'D' or 'E' header at the start of
// b (N, Flags, Refs), updates the cache, sets refs, and returns the bytes
// after it.
func (a *atomRefs) header(b []byte) ([]byte, error) {
	if len(b) < 1 {
		return nil, protoErr("truncated distribution header")
	}
	n := int(b[0])
	b = b[1:]
	clear(a.refs[:a.nrefs])
	a.nrefs = 0
	if n == 0 {
		return b, nil
	}
	nflags := n/2 + 1
	if len(b) < nflags {
		return nil, protoErr("truncated atom cache flags")
	}
	flags, b := b[:nflags], b[nflags:]
	half := func(i int) byte {
		if i%2 == 0 {
			return flags[i/2] & 0x0f
		}
		return flags[i/2] >> 4
	}
	long := half(n)&1 != 0
	for i := range n {
		f := half(i)
		if len(b) < 1 {
			return nil, protoErr("truncated atom cache reference")
		}
		idx := int(f&7)<<8 | int(b[0])
		b = b[1:]
		if f&8 != 0 { // a new entry: its text follows
			var l int
			if long {
				if len(b) < 2 {
					return nil, protoErr("truncated atom cache entry")
				}
				l, b = int(binary.BigEndian.Uint16(b)), b[2:]
			} else {
				if len(b) < 1 {
					return nil, protoErr("truncated atom cache entry")
				}
				l, b = int(b[0]), b[1:]
			}
			if len(b) < l {
				return nil, protoErr("truncated atom cache entry")
			}
			if !utf8.Valid(b[:l]) || utf8.RuneCount(b[:l]) > etf.MaxAtomChars {
				return nil, protoErr("atom cache entry is not an atom")
			}
			a.cache[idx] = actor.Atom(b[:l])
			a.set[idx] = true
			b = b[l:]
		}
		if !a.set[idx] {
			return nil, protoErr("atom cache reference to unset entry %d", idx)
		}
		a.refs[i] = a.cache[idx]
	}
	a.nrefs = n
	return b, nil
}

// fragments reassembles the fragmented messages of one connection. Owned
// by its reader goroutine.
//
// The bytes of the open sequences total at most max. A message that would
// pass it is dropped, if canDrop says its control message (at the start of
// its first fragment) allows it: its sequence stays open, its further
// fragments are checked and not kept, and its last one hands the caller
// the partial marked dropped. Otherwise it is a protocol error.
type fragments struct {
	max     int // total bytes of open sequences
	total   int
	open    map[uint64]*partial
	canDrop func(refs []actor.Atom, first []byte) bool
}

type partial struct {
	next    uint64 // the FragID the next fragment must have
	refs    []actor.Atom
	asm     assembly
	size    int  // bytes received, kept or not
	dropped bool // past max: its bytes are not kept
}

// start opens sequence seq with its first fragment, whose header set refs.
// It returns the whole message when the first fragment is also the last.
func (f *fragments) start(seq, id uint64, refs []actor.Atom, data []byte) (*partial, error) {
	if id == 0 {
		return nil, protoErr("fragment id 0")
	}
	if _, dup := f.open[seq]; dup {
		return nil, protoErr("fragment sequence %d started twice", seq)
	}
	if len(f.open) >= maxSequences {
		return nil, protoErr("more than %d fragmented messages open", maxSequences)
	}
	p := &partial{next: id - 1, refs: append([]actor.Atom(nil), refs...), size: len(data)}
	if f.total+len(data) > f.max {
		if err := f.drop(p, data); err != nil {
			return nil, err
		}
	} else {
		// The size the fragments announce: their number times this one's
		// size, and one more (the first may be the shorter: the header).
		hint := uint64(f.max)
		if id < uint64(f.max) {
			hint = min(hint, (id+1)*uint64(max(len(data), 1)))
		}
		p.asm = assembly{hint: int(hint)}
		p.asm.write(data)
		f.total += len(data)
	}
	if p.next == 0 {
		f.total -= p.asm.n
		return p, nil
	}
	if f.open == nil {
		f.open = make(map[uint64]*partial)
	}
	f.open[seq] = p
	return nil, nil
}

// cont appends a continuation; it returns the message when it is the last.
func (f *fragments) cont(seq, id uint64, data []byte) (*partial, error) {
	p, ok := f.open[seq]
	if !ok {
		return nil, protoErr("fragment of unknown sequence %d", seq)
	}
	if id != p.next {
		return nil, protoErr("fragment %d of sequence %d, want %d", id, seq, p.next)
	}
	p.size += len(data)
	if !p.dropped {
		if f.total+len(data) > f.max {
			if err := f.drop(p, p.asm.first()); err != nil {
				return nil, err
			}
		} else {
			p.asm.write(data)
			f.total += len(data)
		}
	}
	p.next--
	if p.next > 0 {
		return nil, nil
	}
	delete(f.open, seq)
	f.total -= p.asm.n
	return p, nil
}

// drop gives up p's bytes, if its control message allows it.
func (f *fragments) drop(p *partial, first []byte) error {
	if f.canDrop == nil || !f.canDrop(p.refs, first) {
		return protoErr("fragmented messages past MaxMessage (%d bytes), and this one's control message is not a send", f.max)
	}
	f.total -= p.asm.n
	p.asm = assembly{}
	p.dropped = true
	return nil
}

// control is an outgoing control message: a send (op opSendSender,
// opRegSend or opAliasSend, from its fields) or, with op 0, any tuple.
type control struct {
	op       int
	from, to actor.Pid
	name     string  // opRegSend
	alias    etf.Ref // opAliasSend
	tuple    etf.Tuple
	// signal: a link, exit or monitor signal or an answer to one, which
	// the queue's bounds never refuse (a lost signal is a lost exit or
	// Down; signals are small, and bounded by the links and monitors).
	signal bool
}

// encoder builds one peer's outgoing frames. Immutable once the
// connection's flags are known; copied to every sender.
type encoder struct {
	node  *Node
	flags handshake.Flags // the connection's (both ends')
	seq   func() uint64   // fragment sequence ids
}

// appendCtl appends c's encoding, fitted to the peer's flags: SEND_SENDER
// becomes SEND for a peer without SEND_SENDER; an ALIAS_SEND to a peer
// without ALIAS is not sent (ok false), as OTP drops it. The sends go
// through appendSendCtl (fastpath.go) when they can.
func (e *encoder) appendCtl(b []byte, c control) (out []byte, ok bool, err error) {
	var t etf.Tuple
	switch c.op {
	case opSendSender:
		if e.flags&handshake.SendSender == 0 {
			t = etf.Tuple{opSend, actor.Atom(""), c.to}
			break
		}
		if out, ok := e.node.appendSendCtl(b, c.from, c.to, ""); ok {
			return out, true, nil
		}
		t = etf.Tuple{opSendSender, c.from, c.to}
	case opRegSend:
		if out, ok := e.node.appendSendCtl(b, c.from, actor.Pid{}, c.name); ok {
			return out, true, nil
		}
		t = etf.Tuple{opRegSend, c.from, actor.Atom(""), actor.Atom(c.name)}
	case opAliasSend:
		if e.flags&handshake.Alias == 0 {
			return b, false, nil
		}
		t = etf.Tuple{opAliasSend, c.from, c.alias}
	default:
		t = c.tuple
	}
	out, err = e.node.enc.Append(b, t)
	return out, err == nil, err
}

// header reports whether frames carry a distribution header: when the
// connection has DIST_HDR_ATOM_CACHE or FRAGMENTS (OTP expects the header
// from a peer with either, and sends pass-through frames only to a peer
// with neither).
func (e *encoder) header() bool {
	return e.flags&(handshake.DistHdrAtomCache|handshake.Fragments) != 0
}

// frames encodes c and, if hasMsg, msg as the frames of one message: one
// frame, or a fragmented message's frames when it is large and the peer
// takes fragments. Each frame carries its 4-byte length. No frames (nil)
// means the message is not for this peer (appendCtl).
func (e *encoder) frames(c control, msg any, hasMsg bool) ([][]byte, int, error) {
	c, msg, hasMsg = e.payloadForm(c, msg, hasMsg)
	b := e.start(64)
	b, ok, err := e.appendCtl(b, c)
	if err != nil || !ok {
		return nil, 0, err
	}
	ctlEnd := len(b)
	if hasMsg {
		if !e.header() {
			b = append(b, versionMagic)
		}
		if b, err = e.node.enc.Append(b, msg); err != nil {
			return nil, 0, err
		}
	}
	f, n, err := e.finish(b, ctlEnd)
	return f, n, err
}

// framesOf is frames for a message whose body is encoded already (without
// its version byte). A control message that does not encode (it cannot:
// it holds pids, atoms, refs, integers and, for an exit signal, a reason
// that encoded when it was made) drops the message (nil).
func (e *encoder) framesOf(c control, body []byte, hasMsg bool) ([][]byte, int) {
	if !hasMsg {
		var reason any
		if c, reason, hasMsg = e.payloadForm(c, nil, false); hasMsg {
			var err error
			if body, err = e.node.enc.Append(nil, reason); err != nil {
				return nil, 0
			}
		}
	}
	b := e.start(64 + len(body))
	b, ok, err := e.appendCtl(b, c)
	if err != nil || !ok {
		return nil, 0
	}
	ctlEnd := len(b)
	if hasMsg {
		if !e.header() {
			b = append(b, versionMagic)
		}
		b = append(b, body...)
	}
	f, n, err := e.finish(b, ctlEnd)
	if err != nil {
		return nil, 0
	}
	return f, n
}

// start begins a frame: room for its length, then its header ('D' with no
// atom cache references) or the pass-through byte and the control
// message's version byte.
func (e *encoder) start(capacity int) []byte {
	b := make([]byte, 0, capacity)
	if e.header() {
		return append(b, 0, 0, 0, 0, versionMagic, distHeader, 0)
	}
	return append(b, 0, 0, 0, 0, passThrough, versionMagic)
}

// payloadOps maps EXIT, EXIT2 and MONITOR_P_EXIT (and their _TT forms, which
// this node does not send) to the PAYLOAD_ forms that carry the reason
// after the control message.
var payloadOps = map[int]int{
	opExit: opPayloadExit, opExitTT: opPayloadExitTT, opExit2: opPayloadExit2,
	opExit2TT: opPayloadExit2TT, opMonitorPExit: opPayloadMonitorExt,
}

// payloadForm gives an exit signal's PAYLOAD_ form when the connection has
// EXIT_PAYLOAD, as OTP sends them: the control message without its last
// element, the reason, and then the reason as the message. Only the
// message part of a distribution message may be split into fragments (the
// whole control message goes in the first fragment), so a large reason is
// fragmented in this form and not in the other. Anything else is returned
// as it is.
func (e *encoder) payloadForm(c control, msg any, hasMsg bool) (control, any, bool) {
	if hasMsg || c.op != 0 || len(c.tuple) < 2 || e.flags&handshake.ExitPayload == 0 {
		return c, msg, hasMsg
	}
	op, _ := c.tuple[0].(int)
	pop, ok := payloadOps[op]
	if !ok {
		return c, msg, hasMsg
	}
	last := len(c.tuple) - 1
	reason := c.tuple[last]
	t := make(etf.Tuple, last)
	t[0] = pop
	copy(t[1:], c.tuple[1:last])
	c.tuple = t
	return c, reason, true
}

// maxOutFrame bounds a frame this node writes unfragmented: its length
// must fit the 4-byte prefix (and no peer takes more).
const maxOutFrame = 1<<31 - 1

// finish sets a frame's length, or splits a large message into fragments
// when the peer takes them. b is the frame as frames builds it, and ctlEnd
// where its control message ends: only what follows may be split (erts
// guide "External Term Format", "Distribution Header for fragmented
// messages": the atom cache references and the whole control message are
// in the starting fragment, which OTP decodes the control message from
// alone; a control message cut in two is "a corrupted external term" to
// it). A message is fragmented when the part after its control message
// passes fragmentSize; its first fragment holds the control message and
// up to fragmentSize bytes of the rest, each later one fragmentSize bytes
// at most. A large control message with nothing after it is one frame.
func (e *encoder) finish(b []byte, ctlEnd int) ([][]byte, int, error) {
	frag := e.header() && e.flags&handshake.Fragments != 0
	if frag && len(b)-ctlEnd > fragmentSize {
		if ctlEnd+fragmentSize > maxOutFrame {
			return nil, 0, fmt.Errorf("%w: control message of %d bytes", etf.ErrTooLarge, ctlEnd)
		}
		const hdr = 7 // length, 131 'D' and N = 0, which the 'E' frame replaces
		return fragment(b[hdr:], ctlEnd-hdr, e.seq()), len(b) - hdr, nil
	}
	if len(b)-4 > maxOutFrame {
		return nil, 0, fmt.Errorf("%w: message of %d bytes (no fragments)", etf.ErrTooLarge, len(b))
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return [][]byte{b}, len(b), nil
}

// fragment splits a message (its control message, ctlLen bytes, and what
// follows it) into an 'E' frame, which holds the whole control message,
// and 'F' frames.
func fragment(body []byte, ctlLen int, seq uint64) [][]byte {
	rest := len(body) - ctlLen - min(len(body)-ctlLen, fragmentSize) // after the first fragment
	k := 1 + uint64((rest+fragmentSize-1)/fragmentSize)
	out := make([][]byte, 0, k)
	for id := k; id >= 1; id-- {
		var chunk, f []byte
		if id == k {
			chunk = body[:ctlLen+min(len(body)-ctlLen, fragmentSize)]
			f = make([]byte, 4, 4+19+len(chunk))
			f = append(f, versionMagic, fragHeader)
		} else {
			chunk = body[:min(len(body), fragmentSize)]
			f = make([]byte, 4, 4+18+len(chunk))
			f = append(f, versionMagic, fragCont)
		}
		body = body[len(chunk):]
		f = binary.BigEndian.AppendUint64(f, seq)
		f = binary.BigEndian.AppendUint64(f, id)
		if id == k {
			f = append(f, 0) // no atom cache references
		}
		f = append(f, chunk...)
		binary.BigEndian.PutUint32(f, uint32(len(f)-4))
		out = append(out, f)
	}
	return out
}

// tick is the frame a tick is: a zero length.
var tick = []byte{0, 0, 0, 0}
