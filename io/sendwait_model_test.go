//go:build linux

package netio_test

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
)

// gatedReader is the peer's side of a SendWait model: it reads only as the
// test allows (a token a Read, of the size the token says) or, once
// flowing, all the time, and keeps what it read.
type gatedReader struct {
	tokens chan int
	done   chan struct{}
	mu     sync.Mutex
	got    []byte
	err    error
}

// flowAll is a token that reads everything, to EOF.
const flowAll = -1

func newGatedReader(r io.Reader) *gatedReader {
	g := &gatedReader{tokens: make(chan int, 1024), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		flowing := false
		for {
			n := 64 << 10
			if !flowing {
				n = <-g.tokens
				if n == flowAll {
					flowing, n = true, 64<<10
				}
			}
			buf := make([]byte, n)
			k, err := r.Read(buf)
			g.mu.Lock()
			g.got = append(g.got, buf[:k]...)
			g.mu.Unlock()
			if err != nil {
				if err != io.EOF {
					g.err = err
				}
				return
			}
		}
	}()
	return g
}

// Any interleaving of SendWaits of any size (with no wait, a short one, or
// a long one while the peer reads), watermark changes and a peer that
// reads in drawn pieces or not at all keeps SendWait's promises: the peer
// reads exactly the calls that returned nil, each whole and in order (one
// that timed out queued nothing); a call that returned nil found the Conn
// not busy, so the queue it left is at most high plus its own bytes; and
// while the peer reads, a SendWait with a long timeout goes through. It
// runs on whichever backend COLONY_IO_BACKEND names.
func TestSendWaitKeepsTheStreamAndTheWatermarks(t *testing.T) {
	sys := startSys(t)
	marks := [][2]int{{1 << 10, 2 << 10}, {4 << 10, 8 << 10}, {8 << 10, 64 << 10}, {32 << 10, 32 << 10}}
	sizes := []int{1, 100, 4 << 10, 20 << 10, 70 << 10}
	reads := []int{1, 1000, 16 << 10, 64 << 10}
	var through, timedOut atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		p := newProbe(t, sys)
		cn, cli := listenAccept(t, p)
		defer cli.Close()
		smallBuffers(t, cn, cli)
		m := rapid.SampledFrom(marks).Draw(rt, "marks")
		low, high := m[0], m[1]
		if err := cn.SetWatermarks(low, high); err != nil {
			rt.Fatal(err)
		}
		peer := newGatedReader(cli)
		flowing := false
		var sent []byte
		steps := rapid.IntRange(4, 30).Draw(rt, "steps")
		for range steps {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0, 1: // twice as likely: the sends are the point
				b := streamAt(len(sent), rapid.SampledFrom(sizes).Draw(rt, "size"))
				timeout := rapid.SampledFrom([]time.Duration{0, time.Millisecond}).Draw(rt, "timeout")
				if flowing {
					timeout = 20 * time.Second
				}
				err := cn.SendWait(nil, b, timeout)
				switch {
				case err == nil:
					through.Add(1)
					sent = append(sent, b...)
					if q := cn.Pending(); q > high+len(b) {
						rt.Fatalf("SendWait of %d bytes left %d queued, above high (%d) plus its own", len(b), q, high)
					}
				case errors.Is(err, actor.ErrTimeout):
					timedOut.Add(1)
					if flowing {
						rt.Fatalf("SendWait of %d bytes timed out after %v with the peer reading", len(b), timeout)
					}
				default:
					rt.Fatalf("SendWait: %v", err)
				}
			case 2:
				if !flowing {
					for range rapid.IntRange(1, 4).Draw(rt, "reads") {
						peer.tokens <- rapid.SampledFrom(reads).Draw(rt, "readSize")
					}
					if rapid.IntRange(0, 4).Draw(rt, "flow") == 0 {
						peer.tokens <- flowAll
						flowing = true
					}
				}
			case 3:
				m := rapid.SampledFrom(marks).Draw(rt, "newMarks")
				low, high = m[0], m[1]
				if err := cn.SetWatermarks(low, high); err != nil {
					rt.Fatal(err)
				}
			}
		}
		if !flowing {
			peer.tokens <- flowAll
		}
		// Close writes the queue out, then the FIN: the peer reads to EOF.
		if err := cn.Close(); err != nil {
			rt.Fatalf("Close: %v", err)
		}
		recvChan(t, peer.done, 30*time.Second, "the peer's EOF")
		if peer.err != nil {
			rt.Fatalf("peer: %v", peer.err)
		}
		if !bytes.Equal(peer.got, sent) {
			rt.Fatalf("peer read %d bytes, %d sent by the calls that returned nil; first difference at %d",
				len(peer.got), len(sent), firstDiff(peer.got, sent))
		}
		if n := cn.SendWaiters(); n != 0 {
			rt.Fatalf("%d waiters left", n)
		}
		p.do(t, func(c *actor.Context) { c.Stop(actor.Normal) })
		noInternal(t, drainInbox(p)...)
	})
	t.Logf("SendWaits: %d went through, %d timed out", through.Load(), timedOut.Load())
	if through.Load() == 0 || timedOut.Load() == 0 {
		t.Fatalf("the model never made SendWait both go through (%d) and time out (%d): it checks nothing", through.Load(), timedOut.Load())
	}
}
