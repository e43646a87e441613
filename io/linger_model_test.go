//go:build linux

package netio_test

import (
	"bytes"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// Whatever is queued when a Conn is closed, by Close or by its owner's
// death, under any linger timeout, and whenever the peer starts reading,
// the peer reads a prefix of what was sent, never anything else, and
// reads to a clean EOF only if it got every byte: the end is a FIN after
// the whole stream, or a reset. With a linger timeout that cannot run out
// while the peer reads, it gets the whole stream and EOF; with 0 it gets a
// reset. Close's only error is ErrUnsent, which says it discarded queued
// output, and a Close that says so never comes with the whole stream
// delivered.
// It runs on whichever backend COLONY_IO_BACKEND names.
func TestLingerEndsWithTheWholeStreamOrAReset(t *testing.T) {
	sys := startSys(t)
	var whole, reset atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		p := newProbe(t, sys)
		cn, cli := listenAccept(t, p)
		defer cli.Close()
		smallBuffers(t, cn, cli)
		linger := rapid.SampledFrom([]time.Duration{0, 20 * time.Millisecond, 20 * time.Second}).Draw(rt, "linger")
		if err := cn.SetLinger(linger); err != nil {
			rt.Fatal(err)
		}
		var sent []byte
		for range rapid.IntRange(0, 6).Draw(rt, "sends") {
			b := streamAt(len(sent), rapid.SampledFrom([]int{1, 4 << 10, 64 << 10, 256 << 10}).Draw(rt, "size"))
			if err := cn.Send(b); err != nil {
				rt.Fatalf("Send: %v", err)
			}
			sent = append(sent, b...)
		}
		readFirst := rapid.Bool().Draw(rt, "peerReadsBeforeTheClose")
		peer := newGatedReader(cli)
		if readFirst {
			peer.tokens <- flowAll
		}
		byDeath := rapid.Bool().Draw(rt, "closedByOwnerDeath")
		var closeErr error
		if byDeath {
			p.do(t, func(c *actor.Context) { c.Stop(actor.Normal) })
		} else {
			closeErr = cn.Close()
		}
		if !readFirst {
			peer.tokens <- flowAll
		}
		recvChan(t, peer.done, 30*time.Second, "the peer's end of input")
		got := peer.got
		if !bytes.Equal(got, sent[:min(len(got), len(sent))]) || len(got) > len(sent) {
			rt.Fatalf("peer read %d bytes that are not a prefix of the %d sent (first difference at %d)", len(got), len(sent), firstDiff(got, sent))
		}
		cleanEOF := peer.err == nil
		if !cleanEOF && !errors.Is(peer.err, syscall.ECONNRESET) {
			rt.Fatalf("the peer's read ended with %v, want EOF or a reset", peer.err)
		}
		if cleanEOF && len(got) != len(sent) {
			rt.Fatalf("clean EOF after %d of %d bytes: a cut stream passed for a whole one", len(got), len(sent))
		}
		switch {
		case linger == 20*time.Second && !cleanEOF:
			rt.Fatalf("linger %v, peer reading: the stream ended with %v after %d of %d bytes", linger, peer.err, len(got), len(sent))
		case linger == 0 && cleanEOF:
			rt.Fatalf("linger 0: the peer read a clean EOF after %d bytes, want a reset", len(got))
		}
		if closeErr != nil && !errors.Is(closeErr, netio.ErrUnsent) {
			rt.Fatalf("Close: %v", closeErr)
		}
		if errors.Is(closeErr, netio.ErrUnsent) && len(got) == len(sent) && len(sent) > 0 {
			rt.Fatalf("Close said ErrUnsent (%v) and the peer read all %d bytes", closeErr, len(sent))
		}
		if cleanEOF {
			whole.Add(1)
		} else {
			reset.Add(1)
		}
		if !byDeath {
			p.do(t, func(c *actor.Context) { c.Stop(actor.Normal) })
		}
		noInternal(t, drainInbox(p)...)
	})
	t.Logf("ends: %d whole streams with EOF, %d resets", whole.Load(), reset.Load())
	if whole.Load() == 0 || reset.Load() == 0 {
		t.Fatalf("the model never ended both ways (%d whole, %d reset): it checks less than it says", whole.Load(), reset.Load())
	}
}
