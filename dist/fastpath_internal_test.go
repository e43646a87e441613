package dist

import (
	"bytes"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"pgregory.net/rapid"
)

// genericTarget is what the generic path does with a decoded control
// message: where dispatch would deliver its message (ok false: not a send
// dispatch would deliver, or not a well-formed one).
func genericTarget(n *Node, ctl any) (t sendTarget, ok bool) {
	tu, isT := ctl.(etf.Tuple)
	if !isT || len(tu) == 0 {
		return t, false
	}
	op, _ := tu[0].(int)
	if want, known := controlArity[op]; !known || len(tu) != want {
		return t, false
	}
	switch op {
	case opSend, opSendTT, opSendSender, opSendSenderTT:
		pid, isPid := tu[2].(actor.Pid)
		if !isPid {
			return t, false
		}
		if _, _, local := n.sys.LocalParts(pid); !local {
			return sendTarget{remote: true}, true
		}
		return sendTarget{pid: pid}, true
	case opRegSend, opRegSendTT:
		name, isAtom := tu[3].(actor.Atom)
		if !isAtom {
			return t, false
		}
		return sendTarget{name: []byte(name)}, true
	}
	return t, false
}

func sameTarget(a, b sendTarget) bool {
	return a.pid == b.pid && a.remote == b.remote && bytes.Equal(a.name, b.name)
}

// The hand-written control messages are the codec's bytes, and the
// hand-read ones decide what the codec's decoding decides, for random
// sends (local, remote and stale pids; names; trace tokens).
func TestFastPathMatchesCodec(t *testing.T) {
	n := internalNode(t)
	rapid.Check(t, func(rt *rapid.T) {
		local := n.sys.LocalPid(rapid.Uint32().Draw(rt, "id"), rapid.Uint32Range(1, 1<<31).Draw(rt, "serial"))
		node := rapid.SampledFrom([]actor.Atom{n.name, "b@127.0.0.1", "é@h"}).Draw(rt, "node")
		creation := rapid.SampledFrom([]uint32{n.etfNode.Creation, 1, 1 << 31}).Draw(rt, "creation")
		other, err := actor.RemotePid(actor.RemoteID{Node: node, Creation: creation,
			ID: rapid.Uint32().Draw(rt, "rid"), Serial: rapid.Uint32().Draw(rt, "rserial")})
		if err != nil {
			rt.Fatal(err)
		}
		var to actor.Pid
		if node == n.name && creation == n.etfNode.Creation {
			to = n.sys.LocalPid(rapid.Uint32().Draw(rt, "lid"), rapid.Uint32Range(1, 1<<31).Draw(rt, "lserial"))
		} else {
			to = other
		}
		name := actor.Atom(rapid.StringMatching(`[a-z_é]{1,300}`).Draw(rt, "name"))
		token := rapid.SampledFrom([]any{actor.Atom("tok"), etf.Tuple{1, 2, "x"}, []any{}}).Draw(rt, "token")
		var ctl etf.Tuple
		switch rapid.IntRange(0, 5).Draw(rt, "op") {
		case 0:
			ctl = etf.Tuple{opSend, actor.Atom(""), to}
		case 1:
			ctl = etf.Tuple{opSendSender, local, to}
		case 2:
			ctl = etf.Tuple{opRegSend, local, actor.Atom(""), name}
		case 3:
			ctl = etf.Tuple{opSendTT, actor.Atom(""), to, token}
		case 4:
			ctl = etf.Tuple{opSendSenderTT, local, to, token}
		case 5:
			ctl = etf.Tuple{opRegSendTT, local, actor.Atom(""), name, token}
		}
		b, err := n.enc.Append(nil, ctl)
		if err != nil {
			rt.Fatal(err)
		}
		b = append(b, 0xAB) // what follows the control message
		got, rest, ok := n.parseSendCtl(b, nil)
		if !ok {
			rt.Fatalf("declined % x", b)
		}
		dec := etf.Decoder{Node: n.etfNode}
		v, k, err := dec.Decode(b)
		if err != nil {
			rt.Fatal(err)
		}
		want, _ := genericTarget(n, v)
		if !sameTarget(got, want) || !bytes.Equal(rest, b[k:]) {
			rt.Fatalf("fast %+v rest % x; codec %+v rest % x", got, rest, want, b[k:])
		}
		// Writing: the same bytes as the codec's.
		switch ctl[0] {
		case opSendSender:
			if to.IsRemote() {
				fast, ok := n.appendSendCtl(nil, local, to, "")
				if slow, _ := n.enc.Append(nil, ctl); !ok || !bytes.Equal(fast, slow) {
					rt.Fatalf("SEND_SENDER: fast % x, codec % x", fast, slow)
				}
			}
		case opRegSend:
			fast, ok := n.appendSendCtl(nil, local, actor.Pid{}, string(name))
			if slow, _ := n.enc.Append(nil, ctl); !ok || !bytes.Equal(fast, slow) {
				rt.Fatalf("REG_SEND: fast % x, codec % x", fast, slow)
			}
		}
	})
}

// FuzzParseSendCtl: on any bytes the fast path either declines or decides
// what the codec decides, with the same remainder.
func FuzzParseSendCtl(f *testing.F) {
	n := internalNode(f)
	to, _ := actor.RemotePid(actor.RemoteID{Node: "b@h", Creation: 3, ID: 1})
	for _, ctl := range []etf.Tuple{
		{opSendSender, n.kernel, to}, {opSendSender, n.kernel, n.kernel}, {opSend, actor.Atom(""), n.kernel},
		{opRegSend, n.kernel, actor.Atom(""), actor.Atom("echo")},
		{opRegSendTT, n.kernel, actor.Atom(""), actor.Atom("echo"), actor.Atom("t")},
	} {
		b, _ := n.enc.Append(nil, ctl)
		f.Add(append(b, 97, 1))
	}
	// A pid of no node: the codec refuses it, so the fast path must decline.
	f.Add([]byte("\x68\x03\x61\x16\x58\x77\x0b00000000000\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x58\x77\x00000000000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, rest, ok := n.parseSendCtl(b, nil)
		if !ok {
			return
		}
		dec := etf.Decoder{Node: n.etfNode}
		v, k, err := dec.Decode(b)
		if err != nil {
			t.Fatalf("fast path took bytes the codec refuses (%v): % x", err, b)
		}
		want, wok := genericTarget(n, v)
		if !wok || !sameTarget(got, want) || !bytes.Equal(rest, b[k:]) {
			t.Fatalf("fast %+v, codec %+v (%v) on % x", got, want, wok, b)
		}
	})
}
