//go:build linux

package netio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
	"golang.org/x/sys/unix"
)

// probe is an actor that runs closures sent to it (in its handler, with its
// Context) and forwards every other message to inbox.
type probe struct {
	pid   actor.Pid
	sys   *actor.System
	inbox chan any
}

type doFn struct {
	f    func(c *actor.Context)
	done chan struct{}
}

func newProbe(t testing.TB, sys *actor.System) *probe {
	t.Helper()
	p := &probe{sys: sys, inbox: make(chan any, 1024)}
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if d, ok := msg.(doFn); ok {
			d.f(c)
			close(d.done)
			return
		}
		p.inbox <- msg
	}))
	if err != nil {
		t.Fatal(err)
	}
	p.pid = pid
	return p
}

// do runs f in the probe's handler and waits for it.
func (p *probe) do(t testing.TB, f func(c *actor.Context)) {
	t.Helper()
	d := doFn{f, make(chan struct{})}
	if err := p.sys.Send(p.pid, d); err != nil {
		t.Fatal(err)
	}
	recvChan(t, d.done, 10*time.Second, "probe closure")
}

func (p *probe) next(t testing.TB) any {
	t.Helper()
	return recvChan(t, p.inbox, 10*time.Second, "a message to the probe")
}

// listenAccept makes owner listen and accept one plain net client; it returns
// the accepted Conn and the client side.
func listenAccept(t testing.TB, owner *probe) (*netio.Conn, net.Conn) {
	t.Helper()
	var l *netio.Listener
	owner.do(t, func(c *actor.Context) {
		var err error
		if l, err = netio.Listen(c.System(), c.Self(), "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	})
	cli, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	var cn *netio.Conn
	owner.do(t, func(c *actor.Context) {
		var err error
		if cn, err = l.Accept(c, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		l.Close()
	})
	return cn, cli
}

func TestActiveOnceAndN(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	cli.Write([]byte("hello"))
	cn.SetActive(netio.Once)
	m := p.next(t).(netio.Data)
	if m.Conn != cn || string(m.Bytes) != "hello" {
		t.Fatalf("got %v %q", m.Conn, m.Bytes)
	}
	// Passive now: more input waits in the kernel.
	cli.Write([]byte("a"))
	select {
	case m := <-p.inbox:
		t.Fatalf("message in passive mode: %#v", m)
	case <-time.After(20 * time.Millisecond):
	}
	cn.SetActive(netio.N(2))
	var got []byte
	for len(got) < 3 {
		cli.Write([]byte("bc")[:min(2, 3-len(got)-1+1)])
		switch m := p.next(t).(type) {
		case netio.Data:
			got = append(got, m.Bytes...)
		case netio.Passive:
			if len(got) < 3 {
				cn.SetActive(netio.N(2))
			}
		}
	}
	if !strings.HasPrefix(string(got), "ab") {
		t.Fatalf("got %q", got)
	}
}

// TestActiveOn: On ({active, true}) delivers every chunk with no Passive,
// and then Closed; N(k) set on it replaces it rather than adding (as
// inet:setopts does: only {active, N} on a counting socket adds).
func TestActiveOn(t *testing.T) {
	if got := fmt.Sprint(netio.On, netio.Once, netio.Off, netio.N(3)); got != "true once false 3" {
		t.Fatalf("modes print %q", got)
	}
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	if err := cn.SetActive(netio.On); err != nil {
		t.Fatal(err)
	}
	for i := range 50 { // past any count a budget would have spent
		cli.Write([]byte{byte('a' + i%26)})
		if m, ok := p.next(t).(netio.Data); !ok || m.Bytes[0] != byte('a'+i%26) {
			t.Fatalf("message %d: got %#v, want Data", i, m)
		}
	}
	cn.SetActive(netio.N(1)) // replaces On: one more, then Passive
	cli.Write([]byte("z"))
	if m, ok := p.next(t).(netio.Data); !ok || string(m.Bytes) != "z" {
		t.Fatalf("got %#v, want Data z", m)
	}
	if m, ok := p.next(t).(netio.Passive); !ok || m.Conn != cn {
		t.Fatalf("got %#v, want Passive after N(1) replaced On", m)
	}
	cn.SetActive(netio.On)
	cli.Close()
	if m, ok := p.next(t).(netio.Closed); !ok || m.Conn != cn {
		t.Fatalf("got %#v, want Closed", m)
	}
	cn.Close()
}

// TestActiveNAdds: N(k) on a socket with an N budget left adds k to it, as
// {active, N} does in OTP (the differential scenario tcp/active_n_add);
// Once replaces it.
func TestActiveNAdds(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	cn.SetActive(netio.N(1))
	cn.SetActive(netio.N(2))
	for i := range 3 { // one byte at a time, each taken before the next is sent
		cli.Write([]byte{byte('a' + i)})
		if m, ok := p.next(t).(netio.Data); !ok || string(m.Bytes) != string(rune('a'+i)) {
			t.Fatalf("message %d: got %#v, want Data %q", i, m, rune('a'+i))
		}
	}
	if m, ok := p.next(t).(netio.Passive); !ok || m.Conn != cn {
		t.Fatalf("got %#v, want Passive after 1+2 messages", m)
	}
	cn.SetActive(netio.N(5))
	cn.SetActive(netio.Once)
	cli.Write([]byte("x"))
	if m, ok := p.next(t).(netio.Data); !ok || string(m.Bytes) != "x" {
		t.Fatalf("got %#v, want Data x", m)
	}
	cli.Write([]byte("y")) // Once is spent: no message, no Passive
	select {
	case m := <-p.inbox:
		t.Fatalf("message after Once replaced N(5): %#v", m)
	case <-time.After(20 * time.Millisecond):
	}
	cn.Close()
}

func TestPassiveRecvTimeoutAndData(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	p.do(t, func(c *actor.Context) {
		start := time.Now()
		b, err := cn.Recv(c, 4, 30*time.Millisecond)
		if !errors.Is(err, actor.ErrTimeout) || len(b) != 0 {
			t.Errorf("Recv on idle conn: %q, %v; want timeout", b, err)
		}
		if time.Since(start) < 25*time.Millisecond {
			t.Errorf("timeout came early")
		}
		if _, err := cn.Recv(c, 4, 0); !errors.Is(err, actor.ErrTimeout) {
			t.Errorf("Recv poll: %v", err)
		}
	})
	go func() { // in two pieces, apart: Recv(4) must wait for both
		cli.Write([]byte("ab"))
		time.Sleep(5 * time.Millisecond)
		cli.Write([]byte("cd"))
	}()
	p.do(t, func(c *actor.Context) {
		b, err := cn.Recv(c, 4, 5*time.Second)
		if err != nil || string(b) != "abcd" {
			t.Errorf("Recv: %q, %v", b, err)
		}
		if err := cn.SetActive(netio.Once); err != nil {
			t.Error(err)
		}
		if _, err := cn.Recv(c, 0, 0); !errors.Is(err, netio.ErrActive) {
			t.Errorf("Recv in active mode: %v, want ErrActive", err)
		}
	})
	// No internal wake-up message leaked to the handler.
	select {
	case m := <-p.inbox:
		t.Fatalf("unexpected message %#v", m)
	case <-time.After(20 * time.Millisecond):
	}
	// Peer half-closes: active owner gets Closed, can still send.
	cli.(*net.TCPConn).CloseWrite()
	if _, ok := p.next(t).(netio.Closed); !ok {
		t.Fatal("want Closed")
	}
	if err := cn.Send([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(io.LimitReader(cli, 3))
	if string(b) != "bye" {
		t.Fatalf("after half-close read %q", b)
	}
	if err := cn.SetActive(netio.Once); err != io.EOF {
		t.Fatalf("SetActive after Closed: %v, want io.EOF", err)
	}
	cn.Close()
	p.do(t, func(c *actor.Context) {
		if _, err := cn.Recv(c, 0, 0); !errors.Is(err, netio.ErrClosed) {
			t.Errorf("Recv after Close: %v", err)
		}
	})
	if err := cn.Send([]byte("x")); !errors.Is(err, netio.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if err := cn.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestOwnerDeathClosesSockets(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	_, cli := listenAccept(t, p)
	var l *netio.Listener
	p.do(t, func(c *actor.Context) { l, _ = netio.Listen(c.System(), c.Self(), "127.0.0.1:0") })
	if err := sys.Exit(p.pid, actor.Kill); err != nil {
		t.Fatal(err)
	}
	cli.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := cli.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("client read after owner death: %d, %v; want EOF", n, err)
	}
	eventually(t, 5*time.Second, "listener closed", func() bool {
		c, err := net.Dial("tcp", l.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Wait(ctx); err != nil {
		t.Fatalf("Wait after the only owner died: %v (a socket still counted)", err)
	}
}

func TestControllingProcess(t *testing.T) {
	sys := startSys(t)
	a, b, other := newProbe(t, sys), newProbe(t, sys), newProbe(t, sys)
	cn, cli := listenAccept(t, a)
	other.do(t, func(c *actor.Context) {
		if err := cn.ControllingProcess(c, c.Self()); !errors.Is(err, actor.ErrNotOwner) {
			t.Errorf("transfer by non-owner: %v", err)
		}
	})
	a.do(t, func(c *actor.Context) {
		if err := cn.ControllingProcess(c, b.pid); err != nil {
			t.Fatal(err)
		}
	})
	if cn.Owner() != b.pid {
		t.Fatal("owner not moved")
	}
	cn.SetActive(netio.Once)
	cli.Write([]byte("to b"))
	if m := b.next(t).(netio.Data); string(m.Bytes) != "to b" {
		t.Fatalf("b got %q", m.Bytes)
	}
	// The old owner's death does not close it; the new owner's does.
	sys.Exit(a.pid, actor.Kill)
	eventually(t, 5*time.Second, "a dead", func() bool { return !sys.Alive(a.pid) })
	if err := cn.Send([]byte("still")); err != nil {
		t.Fatalf("send after old owner died: %v", err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(cli, buf); err != nil || string(buf) != "still" {
		t.Fatalf("read %q %v", buf, err)
	}
	sys.Exit(b.pid, actor.Kill)
	cli.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := cli.Read(buf); err != io.EOF {
		t.Fatalf("after new owner died: %v, want EOF", err)
	}
	// Transfer to a dead actor fails and leaves the socket where it was.
	c2, _ := listenAccept(t, other)
	other.do(t, func(c *actor.Context) {
		if err := c2.ControllingProcess(c, a.pid); !errors.Is(err, actor.ErrNoProc) {
			t.Errorf("transfer to dead pid: %v", err)
		}
	})
	if c2.Owner() != other.pid {
		t.Fatal("failed transfer moved the socket")
	}
}

func TestBadInput(t *testing.T) {
	// No real lookups: a name is looked up (Dial resolves names), and
	// here none resolves.
	var asked []string
	defer netio.SetLookup(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		asked = append(asked, host)
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	})()
	sys := startSys(t)
	p := newProbe(t, sys)
	// A malformed IP literal ("1.2.3", "::1x") is a bad address, as it
	// was before Dial looked names up: it is no host name (a name's last
	// label is never all digits, and none holds a colon). It was looked
	// up as a name (a query to the resolver; the C library's takes
	// "1.2.3" for 1.2.0.3).
	for _, addr := range []string{"nope", "127.0.0.1", "127.0.0.1:x", "1.2.3:80", "[::1x]:80", "1.2.3.4.5:80", "127.0.0.1:99999", "127.0.0.1:0", "name.test:x", "name.test:0"} {
		if _, err := netio.DialFor(sys, p.pid, addr, time.Second); !errors.Is(err, netio.ErrBadAddress) {
			t.Errorf("Dial %q: %v, want ErrBadAddress", addr, err)
		}
	}
	if len(asked) != 0 {
		t.Errorf("bad addresses were looked up: %q", asked)
	}
	// A name that does not resolve is the resolver's error.
	var dnsErr *net.DNSError
	if _, err := netio.DialFor(sys, p.pid, "example.invalid:80", time.Second); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("Dial example.invalid: %v, want a not-found *net.DNSError", err)
	}
	if _, err := netio.Listen(sys, p.pid, "nope:1"); !errors.Is(err, netio.ErrBadAddress) {
		t.Errorf("Listen bad: %v", err)
	}
	// Refused: a port nobody listens on (bound then closed).
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	p.do(t, func(c *actor.Context) {
		if _, err := netio.Dial(c, dead, 2*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("Dial refused: %v", err)
		}
	})
	// Dial for a dead owner.
	sys2probe := newProbe(t, sys)
	sys.Exit(sys2probe.pid, actor.Kill)
	eventually(t, 5*time.Second, "dead", func() bool { return !sys.Alive(sys2probe.pid) })
	srv, _ := net.Listen("tcp", "127.0.0.1:0")
	defer srv.Close()
	if _, err := netio.DialFor(sys, sys2probe.pid, srv.Addr().String(), time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Errorf("Dial for dead owner: %v", err)
	}
	// Listen on a port in use.
	if _, err := netio.Listen(sys, p.pid, srv.Addr().String()); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("Listen in use: %v", err)
	}
	// An fd registered twice.
	cn, _ := listenAccept(t, p)
	fd, _ := cn.Tag()
	if _, err := netio.RegisterFD(sys, p.pid, int(fd)); !errors.Is(err, netio.ErrRegistered) {
		t.Errorf("double registration: %v", err)
	}
	if err := cn.Send([]byte("x")); err != nil {
		t.Errorf("conn broken by a double registration: %v", err)
	}
	if _, err := netio.DialFor(sys, p.pid, dead, -1); !errors.Is(err, actor.ErrNegativeTimeout) {
		t.Errorf("negative timeout: %v", err)
	}
	// A nil System (these used to panic).
	if _, err := netio.Listen(nil, p.pid, "127.0.0.1:0"); !errors.Is(err, actor.ErrNilSystem) {
		t.Errorf("Listen with a nil System: %v", err)
	}
	if _, err := netio.DialFor(nil, p.pid, dead, time.Second); !errors.Is(err, actor.ErrNilSystem) {
		t.Errorf("DialFor with a nil System: %v", err)
	}
}

func TestPeerReset(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	cli.(*net.TCPConn).SetLinger(0)
	cn.Send([]byte("unread")) // unread data plus linger 0: close sends RST
	awaitReceived(t, cli, len("unread"))
	cli.Close()
	cn.SetActive(netio.Once)
	var sawErr bool
	for {
		switch m := p.next(t).(type) {
		case netio.Error:
			if !errors.Is(m.Err, syscall.ECONNRESET) {
				t.Errorf("error %v, want ECONNRESET", m.Err)
			}
			sawErr = true
			continue
		case netio.Closed:
		default:
			t.Fatalf("unexpected %#v", m)
		}
		break
	}
	if !sawErr {
		t.Error("no Error before Closed")
	}
	// Send on a reset connection: a clear error, not a crash.
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		err = cn.Send([]byte("x"))
	}
	if err == nil {
		t.Error("send on a reset connection kept succeeding")
	}
}

// TestBackpressure: a peer that does not read. Send queues, then refuses
// with ErrBackpressure; nothing is lost: when the peer reads, every byte
// arrives and the owner gets Drained.
func TestBackpressure(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	if err := cn.SetSendQueueLimit(1 << 20); err != nil {
		t.Fatal(err)
	}
	// A bound that is not positive is refused and changes nothing (the
	// pending check at backpressure below fails if it took effect).
	for _, n := range []int{0, -1, -1 << 40} {
		if err := cn.SetSendQueueLimit(n); !errors.Is(err, netio.ErrBadLimit) {
			t.Errorf("SetSendQueueLimit(%d): %v, want ErrBadLimit", n, err)
		}
	}
	chunk := bytes.Repeat([]byte{0x5a}, 64<<10)
	sent := 0
	for {
		err := cn.Send(chunk)
		if errors.Is(err, netio.ErrBackpressure) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sent += len(chunk)
		if sent > 256<<20 {
			t.Fatal("never saw backpressure")
		}
	}
	if cn.Pending() < 1<<20 {
		t.Fatalf("pending %d at backpressure", cn.Pending())
	}
	var got int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 1<<20)
		for got < sent {
			n, err := cli.Read(buf)
			if err != nil {
				return
			}
			got += n
		}
	}()
	if _, ok := p.next(t).(netio.Drained); !ok {
		t.Fatal("want Drained")
	}
	wg.Wait()
	if got != sent || cn.Pending() != 0 {
		t.Fatalf("read %d of %d, pending %d", got, sent, cn.Pending())
	}
	// Close with bytes queued: linger_test.go.
}

// A socket's messages are not refused by its owner's mailbox bound: active
// mode is their flow control (one Data per Once), and a Data refused by a
// full mailbox would be lost, which the owner could never learn of. They
// are delivered as Down and Exit are.
func TestBoundedOwnerLosesNoData(t *testing.T) {
	sys := startSys(t)
	inbox := make(chan any, 16)
	gate := make(chan struct{})
	held := make(chan struct{})
	owner, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if msg == "hold" {
			close(held)
			<-gate // the message being handled still counts against the bound
			return
		}
		inbox <- msg
	}), actor.MailboxBound(1))
	if err != nil {
		t.Fatal(err)
	}
	l, err := netio.Listen(sys, owner, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cli, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if err := l.SetActive(netio.Once); err != nil {
		t.Fatal(err)
	}
	var cn *netio.Conn
	switch m := recvChan(t, inbox, 5*time.Second, "Accepted").(type) {
	case netio.Accepted:
		cn = m.Conn
	default:
		t.Fatalf("got %#v, want Accepted", m)
	}
	// The Accepted may still count against the bound until its handler
	// returns, just after it passed the message on: retry until there is room.
	for errors.Is(sys.Send(owner, "hold"), actor.ErrMailboxFull) {
		time.Sleep(time.Millisecond)
	}
	recvChan(t, held, 5*time.Second, "the owner holding")
	if err := cn.SetActive(netio.Once); err != nil {
		t.Fatal(err)
	}
	cli.Write([]byte("data"))
	// The poller reads it while the mailbox is full: until it is in the
	// server's kernel and out of its receive queue.
	awaitDelivered(t, cli)
	eventually(t, 10*time.Second, "the poller has read the data", func() bool { _, rx, _ := serverSide(t, cli); return rx == 0 })
	close(gate)
	switch m := recvChan(t, inbox, 5*time.Second, "the Data").(type) {
	case netio.Data:
		if string(m.Bytes) != "data" {
			t.Fatalf("got %q", m.Bytes)
		}
	default:
		t.Fatalf("got %#v, want Data", m)
	}
	cn.Close()
}

// TestPassiveRecvLarge: a Recv of n bytes far above one read's chunk
// (rawsys.go cuts every read to readChunk) returns the n bytes in order,
// while the peer is still writing them and after it has.
func TestPassiveRecvLarge(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	const n = 3<<20 + 12345
	want := make([]byte, 2*n)
	for i := range want {
		want[i] = byte(i*7 + i>>11)
	}
	go cli.Write(want)
	p.do(t, func(c *actor.Context) {
		for part := 0; part < 2; part++ {
			b, err := cn.Recv(c, n, 10*time.Second)
			if err != nil || !bytes.Equal(b, want[part*n:(part+1)*n]) {
				t.Errorf("Recv %d of %d bytes: got %d bytes, err %v, equal %v", part, n, len(b), err, bytes.Equal(b, want[part*n:(part+1)*n]))
			}
		}
	})
}

// Killing an owner blocked in Recv: the kill unwinds the wait, which must
// leave s.mu as the caller's deferred unlock expects (it was a fatal
// "unlock of unlocked mutex" that took the whole process down).
func TestKillOwnerBlockedInRecv(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, _ := listenAccept(t, p)
	inFn := make(chan struct{})
	sys.Send(p.pid, doFn{func(c *actor.Context) { close(inFn); cn.Recv(c, 0, actor.Infinity) }, make(chan struct{})})
	<-inFn
	eventually(t, 5*time.Second, "the owner waiting in Recv", func() bool { return actorState(sys, p.pid) != actor.StateRunning })
	sys.Exit(p.pid, actor.Kill)
	eventually(t, 5*time.Second, "owner dead", func() bool { return !sys.Alive(p.pid) })
	eventually(t, 5*time.Second, "the dead owner's socket closed", func() bool { return cn.Send([]byte("x")) != nil })
}

// Data and the peer's FIN (or RST) queued together: the short read of the
// data must not make the socket look drained, or Closed (Error + Closed)
// never comes, as no new edge will announce the EOF.
func TestActiveDataThenFin(t *testing.T) {
	for _, reset := range []bool{false, true} {
		t.Run(fmt.Sprintf("reset=%v", reset), func(t *testing.T) {
			sys := startSys(t)
			p := newProbe(t, sys)
			cn, cli := listenAccept(t, p)
			cli.Write([]byte("hello"))
			awaitDelivered(t, cli) // before a reset, which would discard it
			if reset {
				cli.(*net.TCPConn).SetLinger(0)
				cli.Close()
			} else {
				cli.(*net.TCPConn).CloseWrite()
			}
			// Until the FIN (the server's end in close wait) or the RST (it
			// is gone) is queued behind the data.
			eventually(t, 10*time.Second, "the peer's FIN or RST at the server", func() bool {
				st, _, ok := serverSide(t, cli)
				return !ok || st != 1
			})
			if err := cn.SetActive(netio.N(10)); err != nil {
				t.Fatal(err)
			}
			if m, ok := p.next(t).(netio.Data); !ok || string(m.Bytes) != "hello" {
				t.Fatalf("got %#v, want Data hello", m)
			}
			m := p.next(t)
			if reset {
				if _, ok := m.(netio.Error); !ok {
					t.Fatalf("got %#v, want Error", m)
				}
				m = p.next(t)
			}
			if _, ok := m.(netio.Closed); !ok {
				t.Fatalf("got %#v, want Closed", m)
			}
			cn.Close()
		})
	}
}

// The addresses of a closed socket are nil, even once its fd number names
// another socket.
func TestAddrAfterClose(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, _ := listenAccept(t, p)
	fd, _ := cn.Tag()
	cn.Close()
	var opened []int
	defer func() {
		for _, o := range opened {
			unix.Close(o)
		}
	}()
	reused := false
	for range 64 { // the kernel hands out the lowest free number
		o, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		opened = append(opened, o)
		if int32(o) == fd {
			if err := unix.Bind(o, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
				t.Fatal(err)
			}
			reused = true
			break
		}
	}
	if !reused {
		t.Skip("the fd number was not reused")
	}
	if a := cn.LocalAddr(); a != nil {
		t.Errorf("LocalAddr after Close = %v (another socket's), want nil", a)
	}
	if a := cn.RemoteAddr(); a != nil {
		t.Errorf("RemoteAddr after Close = %v, want nil", a)
	}
}

// blockCloser is a held resource whose Close blocks until released, to hold
// a dying owner's finaliser between taking its resources and closing them.
type blockCloser struct{ entered, release chan struct{} }

func (b *blockCloser) Close() error { close(b.entered); <-b.release; return nil }

// ControllingProcess racing the owner's death: either the transfer fails or
// the new owner keeps a live socket; it used to succeed and then have the
// old owner's finaliser close the socket the new owner held.
func TestTransferRacesOwnerDeath(t *testing.T) {
	sys := startSys(t)
	for iter := 0; iter < 50; iter++ {
		a, b := newProbe(t, sys), newProbe(t, sys)
		cn, _ := listenAccept(t, a)
		bc := &blockCloser{make(chan struct{}), make(chan struct{})}
		if _, err := sys.Hold(a.pid, bc); err != nil {
			t.Fatal(err)
		}
		goCh, errCh, inFn := make(chan struct{}), make(chan error, 1), make(chan struct{})
		sys.Send(a.pid, doFn{func(c *actor.Context) { close(inFn); <-goCh; errCh <- cn.ControllingProcess(c, b.pid) }, make(chan struct{})})
		<-inFn
		w, err := sys.Monitor(a.pid)
		if err != nil {
			t.Fatal(err)
		}
		go sys.Exit(a.pid, actor.Kill)
		<-bc.entered                     // the finaliser has taken a's resources and is closing them
		if cn.Send([]byte("x")) != nil { // map order closed the Conn first: no race this time
			close(bc.release)
			close(goCh)
			<-errCh
			continue
		}
		close(goCh)
		err = <-errCh
		close(bc.release)
		recvChan(t, w.Done(), 10*time.Second, "a's death") // its finaliser is done
		if err == nil && cn.Owner() == b.pid && errors.Is(cn.Send([]byte("y")), netio.ErrClosed) {
			t.Fatal("the transfer succeeded, then the old owner's death closed the socket")
		}
		cn.Close()
		return
	}
}
