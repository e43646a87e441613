package dist

// Control messages (erts guide "Distribution Protocol", "Control
// Messages"; OTP's dist.h, enum dop).
//
// Handled here: the sends (SEND, SEND_SENDER, REG_SEND, ALIAS_SEND and
// their _TT variants, whose trace token is ignored), delivered to the local
// actor in the order the connection carries them.
//
// Handled in link.go and monitor.go (links, exits and monitors across
// nodes, with OTP 26's link protocol): LINK, UNLINK_ID, UNLINK_ID_ACK and
// the old UNLINK; EXIT, EXIT2, their _TT and PAYLOAD_ variants (the trace
// token ignored); MONITOR_P (by pid or registered name), DEMONITOR_P,
// MONITOR_P_EXIT and PAYLOAD_MONITOR_P_EXIT. A LINK or MONITOR_P of a
// process or name that does not exist is answered at once with EXIT or
// MONITOR_P_EXIT noproc, as OTP answers.
//
// Handled in spawn.go: SPAWN_REQUEST and SPAWN_REPLY (and their _TT
// forms).
//
// Known and not handled: group leader and ALTACT_SIG_SEND.
// Each is dropped, logged once per connection and operation at Debug. An
// operation this table does not know, or a control message of the wrong
// shape, is a protocol error: the connection is closed and logged.

import (
	"errors"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// Operations (DOP_*).
const (
	opLink              = 1
	opSend              = 2
	opExit              = 3
	opUnlink            = 4
	opRegSend           = 6
	opGroupLeader       = 7
	opExit2             = 8
	opSendTT            = 12
	opExitTT            = 13
	opRegSendTT         = 16
	opExit2TT           = 18
	opMonitorP          = 19
	opDemonitorP        = 20
	opMonitorPExit      = 21
	opSendSender        = 22
	opSendSenderTT      = 23
	opPayloadExit       = 24
	opPayloadExitTT     = 25
	opPayloadExit2      = 26
	opPayloadExit2TT    = 27
	opPayloadMonitorExt = 28
	opSpawnRequest      = 29
	opSpawnRequestTT    = 30
	opSpawnReply        = 31
	opSpawnReplyTT      = 32
	opAliasSend         = 33
	opAliasSendTT       = 34
	opUnlinkID          = 35
	opUnlinkIDAck       = 36
	opAltactSigSend     = 37
)

var (
	atomNoproc = actor.Atom("noproc")
	atomNotsup = actor.Atom("notsup")
)

// controlArity is the tuple size of the operations dispatch reads.
var controlArity = map[int]int{
	opSend: 3, opSendTT: 4, opSendSender: 3, opSendSenderTT: 4, opRegSend: 4, opRegSendTT: 5,
	opAliasSend: 3, opAliasSendTT: 4, opMonitorP: 4, opLink: 3, opUnlinkID: 4,
	opUnlink: 3, opUnlinkIDAck: 4, opExit: 4, opExitTT: 5, opExit2: 4, opExit2TT: 5,
	opPayloadExit: 3, opPayloadExitTT: 4, opPayloadExit2: 3, opPayloadExit2TT: 4,
	opDemonitorP: 4, opMonitorPExit: 5, opPayloadMonitorExt: 4,
	opSpawnRequest: 6, opSpawnRequestTT: 7,
}

// dispatch acts on one incoming control message (and its message, if
// hasMsg). Called by the connection's reader goroutine only, in wire order.
// A non-nil error is a protocol violation: the caller closes the connection.
func (c *conn) dispatch(ctlv any, msg any, hasMsg bool) error {
	ctl, ok := ctlv.(etf.Tuple)
	if !ok || len(ctl) == 0 {
		return protoErr("control message %s is not a tuple", describe(ctlv))
	}
	op, ok := ctl[0].(int)
	if !ok {
		return protoErr("control message %s has no operation", describe(ctlv))
	}
	if want, ok := controlArity[op]; ok && len(ctl) != want {
		return protoErr("control message %d of arity %d, want %d", op, len(ctl), want)
	}
	needMsg := func() error {
		if !hasMsg {
			return protoErr("control message %d without its message", op)
		}
		return nil
	}
	n := c.n
	switch op {
	case opSend, opSendTT, opSendSender, opSendSenderTT:
		if err := needMsg(); err != nil {
			return err
		}
		to, ok := ctl[2].(actor.Pid)
		if !ok {
			return protoErr("SEND to %s, not a pid", describe(ctl[2]))
		}
		n.deliver(to, msg)
	case opRegSend, opRegSendTT:
		if err := needMsg(); err != nil {
			return err
		}
		name, ok := ctl[3].(actor.Atom)
		if !ok {
			return protoErr("REG_SEND to %s, not an atom", describe(ctl[3]))
		}
		n.deliverName(name, msg)
	case opAliasSend, opAliasSendTT:
		if err := needMsg(); err != nil {
			return err
		}
		alias, ok := ctl[2].(etf.Ref)
		if !ok {
			return protoErr("ALIAS_SEND to %s, not a reference", describe(ctl[2]))
		}
		n.deliverAlias(alias, msg)
	case opLink, opUnlink, opUnlinkID, opUnlinkIDAck, opExit, opExitTT, opExit2, opExit2TT,
		opPayloadExit, opPayloadExitTT, opPayloadExit2, opPayloadExit2TT,
		opMonitorP, opDemonitorP, opMonitorPExit, opPayloadMonitorExt:
		return c.signalIn(op, ctl, msg, hasMsg) // link.go
	case opSpawnRequest, opSpawnRequestTT:
		return c.spawnIn(ctl, msg, hasMsg) // spawn.go
	case opSpawnReply, opSpawnReplyTT:
		return c.spawnReplyIn(ctl) // spawn.go
	case opGroupLeader, opAltactSigSend:
		c.unsupported(op, "group leaders and alternate signals")
	default:
		return protoErr("unknown control message %d", op)
	}
	return nil
}

// control queues a control message with no message body for the peer.
func (c *conn) control(ctl etf.Tuple) {
	if err := c.p.send(c.n.enc, control{tuple: ctl}, nil, false); err != nil && !errors.Is(err, ErrBusy) {
		c.n.logf(levelWarn, "dist: answer %v to %s: %v", ctl[0], c.p.name, err)
	}
}

// unsupported logs a known operation this node does not act on yet, once
// per connection and operation.
func (c *conn) unsupported(op int, what string) {
	if c.warned == nil {
		c.warned = make(map[int]bool)
	}
	if !c.warned[op] {
		c.warned[op] = true
		c.n.logf(levelDebug, "dist: %s sent control message %d, ignored (not supported yet: %s)", c.p.name, op, what)
	}
}

// describe names a decoded value's kind for an error message, without
// printing a peer's data at length.
func describe(v any) string {
	switch v := v.(type) {
	case etf.Tuple:
		return "a tuple"
	case actor.Atom:
		if len(v) > 40 {
			return "an atom"
		}
		return "'" + string(v) + "'"
	case int:
		return "an integer"
	case nil:
		return "nothing"
	}
	return "a term"
}
