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
// the owner, and passive Recvs and TryReads by the owner delivers the
// stream exactly once and in order, each byte either in a Data message or
// in a Recv's or TryRead's result; a Recv or TryRead on a Conn that is
// active is refused with ErrActive and takes nothing; a Passive comes only
// after an N budget was set; no more Readables come than TryReads said
// ErrWouldBlock; after it all, a passive Conn that TryRead found empty
// sends a Readable for the next input; and once the Conn is On and the
// peer sends its FIN, everything written arrives before Closed. It runs on whichever backend COLONY_IO_BACKEND
// names (.ci/run runs the io/ tests on each).
func TestActiveModesDeliverTheStreamInOrder(t *testing.T) {
	sys := startSys(t)
	rapid.Check(t, func(rt *rapid.T) {
		p := newProbe(t, sys)
		cn, cli := listenAccept(t, p)
		defer cli.Close()
		var sent, got []byte
		passives, budgets := 0, 0
		readables, wouldBlocks := 0, 0
		closed := false
		take := func(m any) {
			switch m := m.(type) {
			case netio.Readable:
				readables++
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
		// inHandler runs f in the owner's handler and then takes the
		// messages handled before it (in the inbox), then those the sock
		// delivered after the closure was sent (in the mailbox, read after
		// f), then what f read (after): those messages all came before what
		// f read, in the stream. A Conn that f reads from is passive when it
		// reads, and stays so to its end (only SetActive, from outside,
		// makes it active again), so nothing is delivered after f's read;
		// while f runs, the Conn may go from Once or N to passive as the
		// poller delivers a last Data, so the mailbox is read after f.
		inHandler := func(f func(c *actor.Context), after func()) {
			var before []any
			p.do(t, func(c *actor.Context) {
				for len(p.inbox) > 0 {
					before = append(before, <-p.inbox)
				}
				f(c)
				before = append(before, mailboxNow(c)...)
			})
			for _, m := range before {
				take(m)
			}
			after()
		}
		// tryReads runs TryReads into buffers of size bytes in the owner's
		// handler, until one does not read (or just one), and checks each
		// result; the bytes read join got after the messages taken first.
		tryReads := func(size int, untilEmpty bool) {
			var read []byte
			var errs []error
			bad, badN := false, 0
			inHandler(func(c *actor.Context) {
				for {
					b := make([]byte, size)
					n, err := cn.TryRead(c, b)
					if n < 0 || n > size || (n == 0) == (err == nil) {
						bad, badN, n = true, n, 0
					}
					read = append(read, b[:n]...)
					errs = append(errs, err)
					if err != nil || !untilEmpty {
						return
					}
				}
			}, func() { got = append(got, read...) })
			if bad {
				rt.Fatalf("TryRead into %d bytes returned %d bytes with %v", size, badN, errs[len(errs)-1])
			}
			for _, err := range errs {
				switch {
				case errors.Is(err, netio.ErrWouldBlock):
					wouldBlocks++
				case err == nil, errors.Is(err, netio.ErrActive):
				default:
					rt.Fatalf("TryRead: %v", err)
				}
			}
		}
		write := func(size int) {
			// Each byte is its offset in the stream mod 251, so a lost,
			// doubled or reordered byte shows.
			chunk := make([]byte, size)
			for i := range chunk {
				chunk[i] = byte((len(sent) + i) % 251)
			}
			if _, err := cli.Write(chunk); err != nil {
				rt.Fatal(err)
			}
			sent = append(sent, chunk...)
		}
		// Sizes drawn from lists, not ranges (rapid's ranges lean to
		// small values): single bytes up to several reads' worth.
		sizes := []int{1, 3, 64, 300, 1500, 5000}
		bufSizes := []int{1, 7, 64, 4096, 70000}
		modes := []netio.Active{netio.Once, netio.On, netio.Off, netio.N(1), netio.N(3)}
		steps := rapid.IntRange(8, 40).Draw(rt, "steps")
		for range steps {
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0:
				write(rapid.SampledFrom(sizes).Draw(rt, "size"))
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
				var b []byte
				var err error
				inHandler(func(c *actor.Context) { b, err = cn.Recv(c, 0, 0) }, func() {})
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
			case 4:
				tryReads(rapid.SampledFrom(bufSizes).Draw(rt, "bufSize"), false)
			}
		}
		// Passive, and read empty: the next input must be announced.
		if err := cn.SetActive(netio.Off); err != nil {
			rt.Fatal(err)
		}
		seen := readables
		tryReads(4096, true)
		write(rapid.SampledFrom(sizes).Draw(rt, "lastSize"))
		// A Readable, then read; again if it was an earlier one's. The
		// Readable owed for tryReads' last ErrWouldBlock may already have
		// come, taken with the messages tryReads took after its reads
		// (input written earlier that reached the socket late, or an edge
		// the poller saw late): then no other is owed, and waiting for
		// one would wait forever. Read again instead, which reads the
		// input or says ErrWouldBlock and so is owed a Readable again.
		for len(got) < len(sent) {
			for readables == seen {
				take(p.next(t))
			}
			seen = readables
			tryReads(4096, true)
		}
		if readables > wouldBlocks {
			rt.Fatalf("%d Readable messages for %d TryReads that said ErrWouldBlock", readables, wouldBlocks)
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

// mailboxNow takes, in the handler of c, every message its mailbox holds
// now (zero-timeout receives), in order.
func mailboxNow(c *actor.Context) []any {
	var ms []any
	for {
		m, err := c.Receive(nil, 0)
		if err != nil {
			return ms
		}
		ms = append(ms, m)
	}
}
