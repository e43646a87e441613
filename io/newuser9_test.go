package netio_test

import (
	"testing"
)

// Bugs found by newuser9 (a line-based key-value server on netio).

// A last reply that the kernel took whole (nothing queued in the Conn, so
// Close takes the "closed at once" path) is lost when the peer has sent
// input the owner did not read: close(2) with unread input makes Linux
// reset the connection and discard what it still held for the peer. The
// package doc promises that an actor "may send a last reply and stop ...
// with no wait for Drained", and that the peer reads every byte and then
// EOF; a server answering a pipelined QUIT (with more input behind it)
// broke that whenever the peer had not yet read the reply.
func TestNewuser9LastReplyWithUnreadInput(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	// Input the owner will never read.
	if _, err := cli.Write([]byte("QUIT\nGET more\n")); err != nil {
		t.Fatal(err)
	}
	awaitDelivered(t, cli) // it is in the server's receive queue
	// A reply the kernel takes whole, while the peer reads nothing yet:
	// more than the peer's receive buffer holds, so some of it waits in
	// the server's send buffer.
	want := pattern(200 << 10)
	if err := cn.Send(want); err != nil {
		t.Fatal(err)
	}
	if n := cn.Pending(); n != 0 {
		t.Skipf("%d bytes queued in the Conn: the kernel did not take the whole reply (the lingering path, tested elsewhere)", n)
	}
	if err := cn.Close(); err != nil {
		t.Fatal(err)
	}
	readAll(t, cli, want)
}
