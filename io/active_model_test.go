//go:build linux

package netio_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// Any interleaving of the peer's writes, active-mode changes from outside
// the owner, and passive Recvs by the owner delivers the stream exactly
// once and in order, each byte either in a Data message or in a Recv's
// result; a Recv on a Conn that is active is refused with ErrActive and
// takes nothing; a Passive comes only after an N budget was set; and
// once the Conn is On and the peer sends its FIN, everything written
// arrives before Closed. It runs on whichever backend COLONY_IO_BACKEND
// names (.ci/run runs the io/ tests on each).
func TestActiveModesDeliverTheStreamInOrder(t *testing.T) {
	sys := startSys(t)
	rapid.Check(t, func(rt *rapid.T) {
		p := newProbe(t, sys)
		cn, cli := listenAccept(t, p)
		defer cli.Close()
		var sent, got []byte
		passives, budgets := 0, 0
		closed := false
		take := func(m any) {
			switch m := m.(type) {
			case netio.Data:
				if closed {
					rt.Fatalf("Data %q after Closed", m.Bytes)
				}
				got = append(got, m.Bytes...)
			case netio.Passive:
				passives++
			case netio.Closed:
				closed = true
			case netio.Error:
				rt.Fatalf("socket error: %v", m.Err)
			}
		}
		drain := func() {
			for {
				select {
				case m := <-p.inbox:
					take(m)
				default:
					return
				}
			}
		}
		modes := []netio.Active{netio.Once, netio.On, netio.Off, netio.N(1), netio.N(3)}
		steps := rapid.IntRange(8, 40).Draw(rt, "steps")
		for range steps {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0:
				// Sizes drawn from a list, not a range (rapid's ranges lean
				// to small values): single bytes up to several reads' worth.
				// Each byte is its offset in the stream mod 251, so a lost,
				// doubled or reordered byte shows.
				chunk := make([]byte, rapid.SampledFrom([]int{1, 3, 64, 300, 1500, 5000}).Draw(rt, "size"))
				for i := range chunk {
					chunk[i] = byte((len(sent) + i) % 251)
				}
				if _, err := cli.Write(chunk); err != nil {
					rt.Fatal(err)
				}
				sent = append(sent, chunk...)
			case 1:
				i := rapid.IntRange(0, len(modes)-1).Draw(rt, "mode")
				mode := modes[i]
				if i >= 3 {
					budgets++ // an N budget: its end is a Passive
				}
				if err := cn.SetActive(mode); err != nil {
					rt.Fatalf("SetActive(%v): %v", mode, err)
				}
			case 2:
				// In the owner's handler: the messages handled before
				// this closure are in the inbox; those the sock delivered
				// after it was sent wait in the mailbox, and were all
				// delivered before Recv took the socket (a Conn that Recv
				// reads is passive: nothing is delivered during it). Both
				// come before what Recv finds, in the stream.
				var before []any
				var b []byte
				var err error
				p.do(t, func(c *actor.Context) {
					for len(p.inbox) > 0 {
						before = append(before, <-p.inbox)
					}
					b, err = cn.Recv(c, 0, 0)
					for {
						m, rerr := c.Receive(nil, 0)
						if rerr != nil {
							break
						}
						before = append(before, m)
					}
				})
				for _, m := range before {
					take(m)
				}
				switch {
				case errors.Is(err, netio.ErrActive):
					if len(b) != 0 {
						rt.Fatalf("a refused Recv returned %d bytes", len(b))
					}
				case err == nil, errors.Is(err, actor.ErrTimeout):
					got = append(got, b...)
				default:
					rt.Fatalf("Recv: %v", err)
				}
			case 3:
				drain()
			}
		}
		if err := cn.SetActive(netio.On); err != nil {
			rt.Fatal(err)
		}
		if err := cli.(*net.TCPConn).CloseWrite(); err != nil {
			rt.Fatal(err)
		}
		for !closed {
			take(p.next(t))
		}
		drain()
		if !bytes.Equal(got, sent) {
			rt.Fatalf("delivered %d bytes, %d sent; first difference at %d", len(got), len(sent), firstDiff(got, sent))
		}
		if passives > budgets {
			rt.Fatalf("%d Passive messages for %d N budgets set", passives, budgets)
		}
		if err := cn.Close(); err != nil && !errors.Is(err, netio.ErrClosed) {
			rt.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, cli) // the server's FIN
		p.do(t, func(c *actor.Context) { c.Stop(actor.Normal) })
	})
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
