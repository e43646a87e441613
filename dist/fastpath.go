package dist

// Fast paths for the control messages of sends.
//
// Problem. Every message carries a control tuple ({22, From, To},
// {6, From, '', Name}, {2, '', To}). Through the generic codec, each costs
// a Tuple and the boxing of its elements on both sides, and decoding a pid
// looks its node identity up in actor's process-wide table under a lock;
// profiled, the control tuple was most of the reader's time, and the
// reader is what bounds a connection's throughput.
//
// Approach. The common shapes are written and read by hand:
//
//   - appendSendCtl writes SEND_SENDER and REG_SEND with this node's pid
//     as From, byte for byte what etf would write (SMALL_TUPLE_EXT, the
//     operation as SMALL_INTEGER_EXT, NEW_PID_EXT, SMALL_ATOM_UTF8_EXT or
//     ATOM_UTF8_EXT);
//   - parseSendCtl reads SEND, SEND_SENDER and REG_SEND (and their _TT
//     forms) with every atom inline (no ATOM_CACHE_REF) and returns where
//     the message goes: a local pid (To's node name and creation are this
//     node's) or a registered name. From, the cookie, the unused atom and
//     the trace token are checked for shape only, not built.
//
// Anything else, or anything it is unsure of, it declines (ok false) and
// the generic codec decodes the frame, so the fast path decides nothing
// the generic path would decide otherwise: it is an optimisation of
// recognised bytes, checked against etf by TestFastPathMatchesCodec and
// FuzzParseSendCtl.

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// ETF tags the fast paths read and write.
const (
	tagSmallInt     = 97
	tagInt          = 98
	tagSmallTuple   = 104
	tagNewPid       = 88
	tagPid          = 103
	tagAtomUTF8     = 118
	tagSmallAtomUTF = 119
	tagAtomLatin1   = 100
	tagSmallAtomL1  = 115
)

// appendAtom appends an atom as etf writes it.
func appendAtom(b []byte, a string) []byte {
	if len(a) <= 255 {
		return append(append(b, tagSmallAtomUTF, byte(len(a))), a...)
	}
	b = append(b, tagAtomUTF8)
	b = binary.BigEndian.AppendUint16(b, uint16(len(a)))
	return append(b, a...)
}

// appendLocalPid appends one of this node's pids; false if p is not.
func (n *Node) appendLocalPid(b []byte, p actor.Pid) ([]byte, bool) {
	id, serial, ok := n.sys.LocalParts(p)
	if !ok {
		return b, false
	}
	b = appendAtom(append(b, tagNewPid), string(n.name))
	b = binary.BigEndian.AppendUint32(b, id)
	b = binary.BigEndian.AppendUint32(b, serial)
	return binary.BigEndian.AppendUint32(b, n.etfNode.Creation), true
}

// appendSendCtl appends the control message of a SEND_SENDER to a remote
// pid (name == "") or of a REG_SEND to name; false if from is not this
// node's or to not remote (the caller uses the generic codec then).
func (n *Node) appendSendCtl(b []byte, from, to actor.Pid, name string) ([]byte, bool) {
	if name != "" {
		b = append(b, tagSmallTuple, 4, tagSmallInt, opRegSend)
	} else {
		b = append(b, tagSmallTuple, 3, tagSmallInt, opSendSender)
	}
	b, ok := n.appendLocalPid(b, from)
	if !ok {
		return b, false
	}
	if name != "" {
		b = append(b, tagSmallAtomUTF, 0)
		return appendAtom(b, name), true
	}
	r, ok := to.Remote()
	if !ok {
		return b, false
	}
	b = appendAtom(append(b, tagNewPid), string(r.Node))
	b = binary.BigEndian.AppendUint32(b, r.ID)
	b = binary.BigEndian.AppendUint32(b, r.Serial)
	return binary.BigEndian.AppendUint32(b, r.Creation), true
}

// sendTarget is where parseSendCtl says a message goes.
type sendTarget struct {
	pid    actor.Pid // a local pid, when name is ""
	name   []byte    // a registered name (aliases the frame)
	remote bool      // To names no pid of this node: the message is dropped
}

// ctlReader is a cursor over a control message's bytes.
type ctlReader struct {
	b   []byte
	pos int
	bad bool
}

func (r *ctlReader) u8() byte {
	if r.pos >= len(r.b) {
		r.bad = true
		return 0
	}
	v := r.b[r.pos]
	r.pos++
	return v
}

func (r *ctlReader) bytes(k int) []byte {
	if k < 0 || r.pos+k > len(r.b) {
		r.bad = true
		return nil
	}
	v := r.b[r.pos : r.pos+k]
	r.pos += k
	return v
}

// atom reads an inline atom's bytes (UTF-8 forms only; Latin-1 or a cache
// reference declines: they need conversion or the header).
func (r *ctlReader) atom() []byte {
	var k int
	switch r.u8() {
	case tagSmallAtomUTF:
		k = int(r.u8())
	case tagAtomUTF8:
		h := r.bytes(2)
		if r.bad {
			return nil
		}
		k = int(binary.BigEndian.Uint16(h))
	default:
		r.bad = true
		return nil
	}
	a := r.bytes(k)
	if r.bad || !utf8.Valid(a) || (k > etf.MaxAtomChars && utf8.RuneCount(a) > etf.MaxAtomChars) {
		r.bad = true
		return nil
	}
	return a
}

// pid reads a NEW_PID_EXT: its node's name and the three words.
func (r *ctlReader) pid() (node []byte, id, serial, creation uint32) {
	if r.u8() != tagNewPid {
		r.bad = true
		return
	}
	node = r.atom()
	if len(node) == 0 {
		r.bad = true // the codec refuses a pid of no node
	}
	w := r.bytes(12)
	if r.bad {
		return
	}
	return node, binary.BigEndian.Uint32(w), binary.BigEndian.Uint32(w[4:]), binary.BigEndian.Uint32(w[8:])
}

// parseSendCtl reads a send's control message at the start of b (no version
// byte): it returns the target and the bytes after the control message.
// ok is false when b is not one of the recognised shapes; the caller then
// decodes it with the generic codec.
func (n *Node) parseSendCtl(b []byte, newNode func(actor.Pid) error) (t sendTarget, rest []byte, ok bool) {
	r := ctlReader{b: b}
	if r.u8() != tagSmallTuple {
		return t, nil, false
	}
	arity := r.u8()
	if r.u8() != tagSmallInt {
		return t, nil, false
	}
	op := int(r.u8())
	tt := false
	switch {
	case op == opSend && arity == 3, op == opSendSender && arity == 3:
	case op == opSendTT && arity == 4, op == opSendSenderTT && arity == 4:
		tt = true
	case op == opRegSend && arity == 4:
	case op == opRegSendTT && arity == 5:
		tt = true
	default:
		return t, nil, false
	}
	switch op {
	case opSend, opSendTT:
		r.atom() // the unused cookie
	default:
		r.pid() // From: not needed to deliver
	}
	if op == opRegSend || op == opRegSendTT {
		r.atom() // unused
		t.name = r.atom()
		if len(t.name) == 0 {
			r.bad = true // '' is a name nobody holds: the generic path drops it too
		}
	} else {
		node, id, serial, creation := r.pid()
		t.remote = true
		if string(node) == string(n.name) && creation == n.etfNode.Creation {
			t.pid = n.sys.LocalPid(id, serial)
			_, _, local := n.sys.LocalParts(t.pid)
			t.remote = !local
		}
		if t.remote {
			t.pid = actor.Pid{}
		}
	}
	if r.bad {
		return sendTarget{}, nil, false
	}
	if tt { // a trace token: any term; let the codec skip it
		_, k, err := n.enc2dec(newNode).Decode(b[r.pos:])
		if err != nil {
			return sendTarget{}, nil, false
		}
		r.pos += k
	}
	return t, b[r.pos:], true
}

// enc2dec is a decoder with the node's identity and no atom cache, for the
// odd term a fast path skips (a trace token); newNode is the connection's
// Decoder.NewNode, so that a skipped term's pids spend its budget too.
func (n *Node) enc2dec(newNode func(actor.Pid) error) *etf.Decoder {
	return &etf.Decoder{Node: n.etfNode, MaxSize: n.cfg.MaxMessage, NewNode: newNode}
}
