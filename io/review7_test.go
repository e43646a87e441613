package netio_test

import (
	"bytes"
	"io"
	"sync/atomic"
	"testing"
	"time"

	netio "github.com/colonyrt/colony/io"
)

// Bugs found by review7 of the lingering close (e427cf3), each pinned here.

// A peer that keeps sending while it reads the output of a closed socket
// (a pipelined request, a chat client still typing) must still read every
// byte and then EOF (package doc, "Closing"). The poller dropped input only
// until the queue was handed to the kernel and then closed the fd at once:
// input arriving in between made the kernel reset the connection and throw
// away the output it still held, so the peer got ECONNRESET short of the end.
func TestReview7LingerPeerKeepsSending(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	var stop atomic.Bool
	defer stop.Store(true)
	go func() { // the peer types on, ignoring errors, until the test ends
		b := []byte("more input\n")
		for !stop.Load() {
			if _, err := cli.Write(b); err != nil {
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	want := sendBig(t, cn)
	if err := cn.Close(); err != nil {
		t.Fatal(err)
	}
	cli.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(cli)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("peer read %d of %d bytes, then %v; want every byte, then EOF", len(got), len(want), err)
	}
}

// A lingering socket waits for the peer's acknowledgement of its FIN
// (TestReview7LingerPeerKeepsSending's fix), and that ack wakes the poller:
// a peer that reads every byte and then neither sends nor closes does not
// hold the fd until the linger timeout.
func TestReview7LingerQuietPeerClosesOnAck(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	want := sendBig(t, cn)
	if err := cn.Close(); err != nil {
		t.Fatal(err)
	}
	readAll(t, cli, want)
	eventually(t, 5*time.Second, "the fd closed once the peer had every byte (linger timeout: 30 s)", func() bool { return !netio.PollerRunning(sys) })
}
