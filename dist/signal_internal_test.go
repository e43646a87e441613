package dist

import (
	"math/big"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"pgregory.net/rapid"
)

// Any sequence of link and monitor signals from a peer, well-formed or
// not, mixed with the local actors' own Link and Unlink, never panics, and
// keeps the invariant of link.go's design note: a live local actor holds
// the half of a link to a peer process exactly while the pair's state is
// active. Then the peer's end leaves nothing behind.
func TestSignalsFromPeerKeepLinkInvariant(t *testing.T) {
	n := internalNode(t)
	rapid.Check(t, func(rt *rapid.T) {
		const peerName = actor.Atom("b@127.0.0.1")
		p := newPeer(peerName, 1<<20)
		n.mu.Lock()
		n.peers = map[actor.Atom]*peer{peerName: p}
		n.mu.Unlock()
		c := &conn{n: n, p: p}
		var locals []actor.Pid
		for range 3 {
			pid, err := n.sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.TrapExit())
			if err != nil {
				rt.Fatal(err)
			}
			locals = append(locals, pid)
		}
		defer func() {
			for _, l := range locals {
				n.sys.Exit(l, actor.Kill)
			}
		}()
		dead := n.sys.LocalPid(1<<20-1, 12345) // no actor
		var remotes []actor.Pid
		for i := range 3 {
			r, _ := actor.RemotePid(actor.RemoteID{Node: peerName, Creation: 3, ID: uint32(i), Serial: 1})
			remotes = append(remotes, r)
		}
		refs := []etf.Ref{
			{Node: peerName, Creation: 3, Len: 3, Words: [5]uint32{1, 2, 3}},
			{Node: peerName, Creation: 3, Len: 3, Words: [5]uint32{4, 5, 6}},
			n.monitorRef(1),
		}
		pidOf := func(rt *rapid.T, label string) actor.Pid {
			all := append(append(append([]actor.Pid{}, locals...), remotes...), dead)
			return rapid.SampledFrom(all).Draw(rt, label)
		}
		value := func(rt *rapid.T, label string) any {
			return rapid.OneOf(
				rapid.Just[any](actor.Atom("normal")), rapid.Just[any](actor.Atom("kill")),
				rapid.Just[any](actor.Atom("boom")), rapid.Just[any](actor.Atom("sigdiff_target")),
				rapid.Just[any](etf.Tuple{actor.Atom("shutdown"), 1}), rapid.Just[any](0),
				rapid.Just[any](-1), rapid.Just[any](1), rapid.Just[any](2), rapid.Just[any](new(big.Int).Lsh(big.NewInt(1), 70)),
				rapid.Just[any]("bin"), rapid.Just[any](refs[0]), rapid.Just[any](refs[2]),
				rapid.Map(rapid.Int(), func(int) any { return pidOf(rt, label+"pid") }),
			).Draw(rt, label)
		}
		ops := []int{opLink, opUnlink, opUnlinkID, opUnlinkIDAck, opExit, opExitTT, opExit2, opExit2TT,
			opPayloadExit, opPayloadExitTT, opPayloadExit2, opPayloadExit2TT,
			opMonitorP, opDemonitorP, opMonitorPExit, opPayloadMonitorExt}
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for i := range steps {
			switch rapid.IntRange(0, 9).Draw(rt, "kind") {
			case 0: // a local actor links
				n.LinkRemote(rapid.SampledFrom(locals).Draw(rt, "l"), rapid.SampledFrom(remotes).Draw(rt, "r"))
			case 1: // a local actor unlinks
				n.UnlinkRemote(rapid.SampledFrom(locals).Draw(rt, "l"), rapid.SampledFrom(remotes).Draw(rt, "r"))
			default: // a control message from the peer
				op := rapid.SampledFrom(ops).Draw(rt, "op")
				arity := controlArity[op]
				if rapid.IntRange(0, 9).Draw(rt, "wrongArity") == 0 {
					arity = rapid.IntRange(1, 6).Draw(rt, "arity")
				}
				ctl := etf.Tuple{op}
				for j := 1; j < arity; j++ {
					switch rapid.IntRange(0, 3).Draw(rt, "elem") {
					case 0:
						ctl = append(ctl, value(rt, "v"))
					case 1:
						ctl = append(ctl, rapid.SampledFrom(refs).Draw(rt, "ref"))
					default:
						ctl = append(ctl, pidOf(rt, "pid"))
					}
				}
				var msg any
				hasMsg := rapid.Bool().Draw(rt, "hasMsg")
				if hasMsg {
					msg = value(rt, "msg")
				}
				c.dispatch(ctl, msg, hasMsg) // an error closes the connection: fine
			}
			checkLinkInvariant(rt, n, p, locals, remotes, i)
		}
		p.end(ErrDisconnected)
		for _, l := range locals {
			for _, r := range remotes {
				if n.sys.Alive(l) && n.sys.HasRemoteLink(l, r) {
					rt.Fatalf("after the end, %v still holds a half to %v", l, r)
				}
			}
			if info, err := n.sys.Info(l); err == nil && (info.Monitors != 0 || info.Links != 0) {
				rt.Fatalf("after the end, %v keeps %d links and %d monitors", l, info.Links, info.Monitors)
			}
		}
	})
}

func checkLinkInvariant(rt *rapid.T, n *Node, p *peer, locals, remotes []actor.Pid, step int) {
	s := p.signals(n)
	defer s.mu.Unlock()
	for _, l := range locals {
		if !n.sys.Alive(l) {
			continue
		}
		for _, r := range remotes {
			st, had := s.links[linkKey{l, r}]
			active := had && st == 0
			if half := n.sys.HasRemoteLink(l, r); half != active {
				rt.Fatalf("step %d: %v-%v: half %v, state active %v (had %v, id %d)", step, l, r, half, active, had, st)
			}
		}
	}
}
