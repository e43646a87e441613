//go:build linux

package netio_test

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// Any interleaving of the peer's writes, active-mode changes and
// ControllingProcess hand-offs among three actors (and refused hand-offs by
// actors that are not the owner) delivers the stream once and in order,
// each part of it to the actor that owned the Conn when it was delivered:
// an actor that handed the Conn on is sent nothing about it afterwards,
// and a non-owner's ControllingProcess is ErrNotOwner and changes nothing.
// It runs on whichever backend COLONY_IO_BACKEND names.
func TestControllingProcessHandsTheStreamOn(t *testing.T) {
	sys := startSys(t)
	rapid.Check(t, func(rt *rapid.T) {
		ps := []*probe{newProbe(t, sys), newProbe(t, sys), newProbe(t, sys)}
		cn, cli := listenAccept(t, ps[0])
		defer cli.Close()
		owner := 0
		var sent, got []byte
		closed := false
		take := func(from int, m any) {
			switch m := m.(type) {
			case netio.Data:
				if from != owner {
					rt.Fatalf("actor %d, not the owner (%d), was sent Data %q", from, owner, m.Bytes)
				}
				if closed {
					rt.Fatalf("Data %q after Closed", m.Bytes)
				}
				got = append(got, m.Bytes...)
			case netio.Closed:
				if from != owner {
					rt.Fatalf("actor %d, not the owner (%d), was sent Closed", from, owner)
				}
				closed = true
			case netio.Error:
				rt.Fatalf("socket error: %v", m.Err)
			}
		}
		drainAll := func() {
			for i, p := range ps {
				for _, m := range drainInbox(p) {
					take(i, m)
				}
			}
		}
		modes := []netio.Active{netio.Once, netio.On, netio.Off, netio.N(2)}
		for range rapid.IntRange(6, 30).Draw(rt, "steps") {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0:
				chunk := make([]byte, rapid.SampledFrom([]int{1, 64, 1500, 5000}).Draw(rt, "size"))
				for i := range chunk {
					chunk[i] = byte((len(sent) + i) % 251)
				}
				if _, err := cli.Write(chunk); err != nil {
					rt.Fatal(err)
				}
				sent = append(sent, chunk...)
			case 1:
				if err := cn.SetActive(rapid.SampledFrom(modes).Draw(rt, "mode")); err != nil {
					rt.Fatalf("SetActive: %v", err)
				}
			case 2:
				// The owner hands the Conn on, then takes what it was sent
				// before: every delivery to it came before the hand-off
				// (both under the socket's lock), so its messages come
				// before the new owner's in the stream.
				to := rapid.IntRange(0, len(ps)-1).Draw(rt, "to")
				var before []any
				var err error
				ps[owner].do(t, func(c *actor.Context) {
					err = cn.ControllingProcess(c, ps[to].pid)
					before = mailboxNow(c)
				})
				if err != nil {
					rt.Fatalf("the owner's ControllingProcess: %v", err)
				}
				for _, m := range drainInbox(ps[owner]) {
					take(owner, m)
				}
				for _, m := range before {
					take(owner, m)
				}
				owner = to
				if cn.Owner() != ps[owner].pid {
					rt.Fatalf("Owner is %v after the hand-off to %v", cn.Owner(), ps[owner].pid)
				}
			case 3:
				other := (owner + 1 + rapid.IntRange(0, len(ps)-2).Draw(rt, "notOwner")) % len(ps)
				var err error
				ps[other].do(t, func(c *actor.Context) { err = cn.ControllingProcess(c, ps[other].pid) })
				if !errors.Is(err, actor.ErrNotOwner) {
					rt.Fatalf("ControllingProcess by actor %d, not the owner: %v, want ErrNotOwner", other, err)
				}
				if cn.Owner() != ps[owner].pid {
					rt.Fatal("a refused ControllingProcess changed the owner")
				}
			}
			drainAll()
		}
		if err := cn.SetActive(netio.On); err != nil {
			rt.Fatal(err)
		}
		if err := cli.(*net.TCPConn).CloseWrite(); err != nil {
			rt.Fatal(err)
		}
		for !closed {
			take(owner, ps[owner].next(t))
		}
		drainAll()
		if !bytes.Equal(got, sent) {
			rt.Fatalf("delivered %d bytes, %d sent; first difference at %d", len(got), len(sent), firstDiff(got, sent))
		}
		cn.Close()
		for _, p := range ps {
			p.do(t, func(c *actor.Context) { c.Stop(actor.Normal) })
		}
	})
}
