//go:build linux

package netio_test

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// quietFor fails if the probe is sent anything within a short while: a
// check that something does not happen, so it has to wait some time.
func quietFor(t *testing.T, p *probe, what string) {
	t.Helper()
	select {
	case m := <-p.inbox:
		t.Fatalf("%s: got %#v", what, m)
	case <-time.After(30 * time.Millisecond):
	}
}

// TestTryReadAnnouncesInputWithReadable: TryRead on an empty passive Conn
// says ErrWouldBlock and arms one Readable, which comes with the next
// input; the input is then read into the caller's buffer; the end of input
// is announced too, and read as io.EOF.
func TestTryReadAnnouncesInputWithReadable(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	buf := make([]byte, 16)
	try := func() (string, error) {
		var n int
		var err error
		p.do(t, func(c *actor.Context) { n, err = cn.TryRead(c, buf) })
		return string(buf[:n]), err
	}
	if s, err := try(); !errors.Is(err, netio.ErrWouldBlock) || s != "" {
		t.Fatalf("TryRead on an idle Conn: %q, %v; want ErrWouldBlock", s, err)
	}
	quietFor(t, p, "a Readable with no input")
	if _, err := cli.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if m, ok := p.next(t).(netio.Readable); !ok || m.Conn != cn {
		t.Fatalf("after input: %#v, want Readable for the Conn", m)
	}
	if s, err := try(); err != nil || s != "hello" {
		t.Fatalf("TryRead after Readable: %q, %v; want hello", s, err)
	}
	// The short read emptied it: ErrWouldBlock, and one Readable for the
	// next input however much comes.
	if _, err := try(); !errors.Is(err, netio.ErrWouldBlock) {
		t.Fatalf("TryRead after a short read: %v, want ErrWouldBlock", err)
	}
	if _, err := cli.Write([]byte("0123456789abcdefXYZ")); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.next(t).(netio.Readable); !ok {
		t.Fatal("want a Readable for the second input")
	}
	if s, err := try(); err != nil || s != "0123456789abcdef" {
		t.Fatalf("TryRead into 16 bytes: %q, %v", s, err)
	}
	if s, err := try(); err != nil || s != "XYZ" {
		t.Fatalf("TryRead of the rest: %q, %v", s, err)
	}
	if _, err := try(); !errors.Is(err, netio.ErrWouldBlock) {
		t.Fatalf("TryRead when empty: %v, want ErrWouldBlock", err)
	}
	quietFor(t, p, "a second Readable for one arming")
	if err := cli.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.next(t).(netio.Readable); !ok {
		t.Fatal("want a Readable for the end of input")
	}
	for range 2 {
		if _, err := try(); err != io.EOF {
			t.Fatalf("TryRead at the end of input: %v, want io.EOF", err)
		}
	}
	quietFor(t, p, "a message after io.EOF")
}

// TestTryReadRefusals: a TryRead that cannot read says why and takes
// nothing: an empty buffer, an active Conn, another actor, a closed Conn.
// A Readable armed before the Conn is made active, or handed to another
// owner, is not sent.
func TestTryReadRefusals(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	other := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	buf := make([]byte, 8)
	p.do(t, func(c *actor.Context) {
		if n, err := cn.TryRead(c, nil); n != 0 || err != nil {
			t.Errorf("TryRead into nothing: %d, %v; want 0, nil", n, err)
		}
		if _, err := cn.TryRead(c, buf); !errors.Is(err, netio.ErrWouldBlock) {
			t.Errorf("TryRead: %v, want ErrWouldBlock", err)
		}
	})
	other.do(t, func(c *actor.Context) {
		if _, err := cn.TryRead(c, buf); !errors.Is(err, actor.ErrNotOwner) {
			t.Errorf("TryRead by another actor: %v, want ErrNotOwner", err)
		}
	})
	// Armed, then made active: the input comes as Data, with no Readable.
	if err := cn.SetActive(netio.Once); err != nil {
		t.Fatal(err)
	}
	p.do(t, func(c *actor.Context) {
		if _, err := cn.TryRead(c, buf); !errors.Is(err, netio.ErrActive) {
			t.Errorf("TryRead on an active Conn: %v, want ErrActive", err)
		}
	})
	if _, err := cli.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if m, ok := p.next(t).(netio.Data); !ok || string(m.Bytes) != "a" {
		t.Fatalf("after SetActive(Once): %#v, want Data a", m)
	}
	quietFor(t, p, "a Readable after SetActive")
	// Armed, then handed over: neither owner is sent a Readable.
	p.do(t, func(c *actor.Context) {
		if _, err := cn.TryRead(c, buf); !errors.Is(err, netio.ErrWouldBlock) {
			t.Errorf("TryRead: %v, want ErrWouldBlock", err)
		}
		if err := cn.ControllingProcess(c, other.pid); err != nil {
			t.Error(err)
		}
	})
	if _, err := cli.Write([]byte("b")); err != nil {
		t.Fatal(err)
	}
	quietFor(t, p, "the old owner's Readable")
	quietFor(t, other, "a Readable the new owner did not ask for")
	other.do(t, func(c *actor.Context) {
		if n, err := cn.TryRead(c, buf); err != nil || string(buf[:n]) != "b" {
			t.Errorf("the new owner's TryRead: %q, %v; want b", buf[:n], err)
		}
	})
	cn.Close()
	other.do(t, func(c *actor.Context) {
		if _, err := cn.TryRead(c, buf); !errors.Is(err, netio.ErrClosed) {
			t.Errorf("TryRead after Close: %v, want ErrClosed", err)
		}
	})
}

// TestTryReadReportsAPeerReset: a reset while a Readable is armed is
// announced like input, and TryRead then returns the wrapped ECONNRESET,
// after the bytes that came before it; it keeps returning it.
func TestTryReadReportsAPeerReset(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	buf := make([]byte, 64)
	p.do(t, func(c *actor.Context) {
		if _, err := cn.TryRead(c, buf); !errors.Is(err, netio.ErrWouldBlock) {
			t.Errorf("TryRead: %v, want ErrWouldBlock", err)
		}
	})
	tc := cli.(*net.TCPConn)
	if _, err := tc.Write([]byte("last")); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.next(t).(netio.Readable); !ok {
		t.Fatal("want a Readable for the input")
	}
	if err := tc.SetLinger(0); err != nil {
		t.Fatal(err)
	}
	tc.Close() // a reset: SO_LINGER {on, 0}
	var reads []string
	var last error
	p.do(t, func(c *actor.Context) {
		for range 1000 { // until the reset is seen: it may come after the bytes are read
			n, err := cn.TryRead(c, buf)
			if n > 0 {
				reads = append(reads, string(buf[:n]))
			}
			if err != nil && !errors.Is(err, netio.ErrWouldBlock) {
				last = err
				return
			}
			if errors.Is(err, netio.ErrWouldBlock) {
				return // the reset is not here yet: a Readable will say
			}
		}
	})
	if last == nil {
		if _, ok := p.next(t).(netio.Readable); !ok {
			t.Fatal("want a Readable for the reset")
		}
		p.do(t, func(c *actor.Context) { _, last = cn.TryRead(c, buf) })
	}
	if !errors.Is(last, syscall.ECONNRESET) {
		t.Fatalf("TryRead after the peer's reset: %v, want ECONNRESET", last)
	}
	if len(reads) > 1 || (len(reads) == 1 && reads[0] != "last") {
		t.Fatalf("read %q before the reset, want at most \"last\"", reads)
	}
	p.do(t, func(c *actor.Context) {
		if _, err := cn.TryRead(c, buf); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("TryRead again: %v, want ECONNRESET again", err)
		}
	})
}
