package dist

// Messages past MaxMessage.
//
// OTP has no bound of its own on a distribution message: it takes what
// its memory holds. A Colony node bounds what one message may make it hold
// (Config.MaxMessage) and, past the bound, refuses the message rather than
// the connection wherever the protocol lets it skip the message safely:
//
//   - A frame's length comes first, so a frame past the bound is not read
//     into memory: its first bytes (at most smallFrame) are read to find
//     its control message, and the rest is read and thrown away as it
//     arrives.
//   - A fragmented message's size is known only as its fragments come; once
//     the open sequences would hold more than the bound, the one that grew
//     is dropped: its bytes are freed, its later fragments are checked and
//     not kept, and its last fragment ends it.
//
// Which messages may be dropped: the sends (SEND, SEND_SENDER, REG_SEND,
// ALIAS_SEND and their _TT forms). A message is all they carry; dropping it
// is what a send to a dead process does, and the sender's links and
// monitors are untouched. Every other control message carries a signal that
// must not be lost: an EXIT or EXIT2 (and their PAYLOAD forms, whose reason
// can be large) lost would leave a linked process running that should have
// died, a MONITOR_P_EXIT lost a monitor that never fires, a SPAWN_REQUEST
// or SPAWN_REPLY lost a caller waiting for ever. For those the connection
// is closed (a protocol error), so that every link and monitor over it
// fires with noconnection: a loss the protocol has a meaning for. A control
// message that cannot be read from the frame's first bytes is treated the
// same.
//
// Each refused message counts in Stats.Oversized and is logged at Warn, at
// most one line a second per node (the line gives the count so far).

import (
	"errors"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// oversized handles a frame past MaxMessage: head is its start, over the
// number of its bytes still unread. A send's frame is skipped and refused;
// any other is a protocol error.
func (c *conn) oversized(head []byte, over int) error {
	size := len(head) + over
	if !c.frameIsSend(head) {
		return protoErr("frame of %d bytes (MaxMessage %d) whose control message is not a send", size, c.n.cfg.MaxMessage)
	}
	if err := c.fr.skip(over); err != nil {
		return err
	}
	c.refuse(size)
	return nil
}

// frameIsSend reports whether the frame starting with head (a pass-through
// or 'D' frame; not a fragment) carries a send, reading its header (which
// updates the atom cache, as the header of any frame does) and its control
// message.
func (c *conn) frameIsSend(head []byte) bool {
	switch {
	case len(head) > 1 && head[0] == passThrough:
		clear(c.atoms.refs[:c.atoms.nrefs])
		c.atoms.nrefs = 0
		return c.controlIsSend(nil, head[1:], true)
	case len(head) > 2 && head[0] == versionMagic && head[1] == distHeader:
		rest, err := c.atoms.header(head[2:])
		if err != nil {
			return false
		}
		return c.controlIsSend(c.atoms.refs[:c.atoms.nrefs], rest, false)
	}
	return false
}

// canDrop is fragments.canDrop: whether a fragmented message whose first
// bytes are first, with the atom table refs, carries a send.
func (c *conn) canDrop(refs []actor.Atom, first []byte) bool {
	return c.controlIsSend(refs, first, false)
}

// controlIsSend decodes the control message at the start of b.
func (c *conn) controlIsSend(refs []actor.Atom, b []byte, versioned bool) bool {
	d := etf.Decoder{Node: c.dec.Node, AtomRefs: refs, MaxSize: c.dec.MaxSize, NewNode: c.dec.NewNode}
	var ctl any
	var err error
	if versioned {
		ctl, _, err = d.DecodeVersioned(b)
	} else {
		ctl, _, err = d.Decode(b)
	}
	return err == nil && isSend(ctl)
}

// tooLarge reports whether a decoding error is a message past MaxMessage,
// which a send may be refused for with its connection kept. A peer past its
// node identity budget (nodebudget.go) is ErrTooLarge to the decoder too,
// but that ends the connection, whatever the message.
func tooLarge(err error) bool {
	return errors.Is(err, etf.ErrTooLarge) && !errors.Is(err, ErrNodeBudget)
}

// isSend reports whether a decoded control message is a send.
func isSend(ctl any) bool {
	t, ok := ctl.(etf.Tuple)
	if !ok || len(t) == 0 {
		return false
	}
	switch t[0] {
	case opSend, opSendTT, opSendSender, opSendSenderTT, opRegSend, opRegSendTT, opAliasSend, opAliasSendTT:
		return true
	}
	return false
}

// refuse counts a message of size bytes refused for its size, and logs it
// (at most a line a second per node).
func (c *conn) refuse(size int) {
	n := c.n
	total := n.stats.oversized.Add(1)
	now := time.Now().UnixNano()
	last := n.stats.oversizedLogged.Load()
	if now-last < int64(time.Second) || !n.stats.oversizedLogged.CompareAndSwap(last, now) {
		return
	}
	n.logf(levelWarn, "dist: a message of %d bytes from %s refused: past MaxMessage (%d bytes); %d refused since the node started",
		size, c.p.name, n.cfg.MaxMessage, total)
}
