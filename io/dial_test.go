//go:build linux

package netio_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
	"golang.org/x/sys/unix"
)

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// Dial and DialFor resolve a host name off the scheduler and try its
// addresses in order until one connects: an upstream is often a name, not
// an IP literal.
func TestDialResolvesNames(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	var asked []string
	defer netio.SetLookup(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		asked = append(asked, host) // the callers below run one at a time
		switch host {
		case "svc.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		case "two.test": // the first address refuses (nothing listens on 127.0.0.2 there)
			return []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	})()
	sys := startSys(t)
	p := newProbe(t, sys)
	addr := func(h string) string { return net.JoinHostPort(h, strconv.Itoa(port)) }
	p.do(t, func(c *actor.Context) {
		for _, h := range []string{"svc.test", "two.test"} {
			cn, err := netio.Dial(c, addr(h), 5*time.Second)
			if err != nil {
				t.Errorf("Dial(%s): %v", h, err)
				continue
			}
			if got := cn.RemoteAddr().String(); got != addr("127.0.0.1") {
				t.Errorf("Dial(%s) connected to %s", h, got)
			}
			cn.Close()
		}
		var dnsErr *net.DNSError
		if _, err := netio.Dial(c, addr("nowhere.test"), 5*time.Second); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("Dial(nowhere.test): %v, want a not-found *net.DNSError", err)
		}
	})
	cn, err := netio.DialFor(sys, p.pid, addr("svc.test"), 5*time.Second)
	if err != nil {
		t.Fatalf("DialFor(svc.test): %v", err)
	}
	cn.Close()
	if len(asked) != 4 {
		t.Errorf("lookups %q, want one per name dialled", asked)
	}
	// The lookup result is taken by the dial, never left in the mailbox.
	if info, err := sys.Info(p.pid); err != nil || info.MailboxLen != 0 {
		t.Errorf("probe's mailbox after the dials: %+v, %v", info, err)
	}
}

// A lookup that outlasts Dial's timeout ends the Dial with
// actor.ErrTimeout in time, the lookup's context cancelled, and no result
// is left behind in the caller's mailbox. A zero timeout cannot look a
// name up at all.
func TestDialLookupTimeout(t *testing.T) {
	defer netio.SetLookup(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		<-ctx.Done() // a resolver that never answers, until its context ends
		return nil, &net.DNSError{Err: ctx.Err().Error(), Name: host, IsTimeout: true}
	})()
	sys := startSys(t)
	p := newProbe(t, sys)
	addr := "slow.test:" + strconv.Itoa(closedPort(t))
	p.do(t, func(c *actor.Context) {
		start := time.Now()
		_, err := netio.Dial(c, addr, 50*time.Millisecond)
		if !errors.Is(err, actor.ErrTimeout) {
			t.Errorf("Dial: %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d < 50*time.Millisecond || d > 5*time.Second {
			t.Errorf("Dial took %v for a 50ms timeout", d)
		}
		if _, err := netio.Dial(c, addr, 0); !errors.Is(err, actor.ErrTimeout) {
			t.Errorf("Dial with timeout 0: %v, want ErrTimeout", err)
		}
	})
	if info, err := sys.Info(p.pid); err != nil || info.MailboxLen != 0 {
		t.Errorf("probe's mailbox after the timeout: %+v, %v", info, err)
	}
	if _, err := netio.DialFor(sys, p.pid, addr, 20*time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
		t.Errorf("DialFor: %v, want ErrTimeout", err)
	}
}

// A kill ends a Dial waiting for its lookup at once; the lookup is
// cancelled.
func TestDialLookupKilled(t *testing.T) {
	cancelled := make(chan struct{})
	started := make(chan struct{})
	defer netio.SetLookup(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	})()
	sys := startSys(t)
	done := make(chan struct{})
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		defer close(done)
		netio.Dial(c, "hang.test:80", actor.Infinity)
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "go")
	recvChan(t, started, 5*time.Second, "the lookup to start")
	sys.Exit(pid, actor.Kill)
	recvChan(t, done, 5*time.Second, "the killed Dial to unwind")
	recvChan(t, cancelled, 5*time.Second, "the lookup to be cancelled")
}

// A name's addresses are tried in turn only while the owner lives: Dial
// stops at its death. It went on to connect to every address left (the
// first refused here; the second accepted the connection, and only then
// did the socket's hold fail with actor.ErrNoProc, closing it).
func TestDialStopsAtOwnerDeath(t *testing.T) {
	// The second address listens; the first, on the same port, does not.
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	sys := startSys(t)
	p := newProbe(t, sys)
	defer netio.SetLookup(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		// The owner dies while its name is looked up.
		sys.Exit(p.pid, actor.Kill)
		eventually(t, 5*time.Second, "the owner dead", func() bool { return !sys.Alive(p.pid) })
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")}, nil
	})()
	if _, err := netio.DialFor(sys, p.pid, net.JoinHostPort("two.test", strconv.Itoa(port)), 5*time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Errorf("DialFor for an owner that died: %v, want ErrNoProc", err)
	}
	ln.SetDeadline(time.Now().Add(300 * time.Millisecond))
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Error("an address was dialled for an owner known dead")
	}
}

// A resolver that ignores its context's deadline does not hold Dial past
// its timeout: the handler's wait has the same deadline.
func TestDialLookupOverrunsItsContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	defer netio.SetLookup(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		<-release // deaf to ctx
		return nil, errors.New("too late")
	})()
	sys := startSys(t)
	p := newProbe(t, sys)
	p.do(t, func(c *actor.Context) {
		start := time.Now()
		_, err := netio.Dial(c, "deaf.test:80", 50*time.Millisecond)
		if !errors.Is(err, actor.ErrTimeout) {
			t.Errorf("Dial: %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Dial took %v for a 50ms timeout", d)
		}
	})
	start := time.Now()
	if _, err := netio.DialFor(sys, p.pid, "deaf.test:80", 50*time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
		t.Errorf("DialFor: %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("DialFor took %v for a 50ms timeout", d)
	}
}

// DialFor whose owner dies while the connect is in progress: ErrClosed, not
// an error read from the closed (and perhaps reused) fd's SO_ERROR.
func TestDialOwnerDiesMidConnect(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	// A listener that never accepts, its queue filled, so a connect to it
	// stays in progress.
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(lfd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(lfd)
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
	for i := range 4 {
		d := 200 * time.Millisecond // the queue's full after the first: the rest time out
		if i == 0 {
			d = 10 * time.Second // the one the queue holds, on a busy machine too
		}
		if c, err := net.DialTimeout("tcp", addr, d); err == nil {
			defer c.Close()
		}
	}
	type res struct {
		cn  *netio.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		// The connect never completes (the listener's queue is full), so
		// the timeout is only a bound: the kill must end the wait long
		// before it.
		cn, err := netio.DialFor(sys, p.pid, addr, time.Minute)
		ch <- res{cn, err}
	}()
	// Mid-connect is DialFor in its wait for the connect: the owner's hold
	// taken, the SYN sent. A kill before the hold (the SYN in /proc/net/tcp
	// shows as soon as connect(2) returns) is a kill before the dial, which
	// is ErrNoProc (TestDialStopsAtOwnerDeath), not this case.
	for deadline := time.Now().Add(30 * time.Second); netio.DialWaiters(sys) != 1; time.Sleep(time.Millisecond) {
		select {
		case r := <-ch:
			t.Skipf("the connect did not stay in progress: %v", r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("DialFor never waited for its connect")
		}
	}
	if _, _, ok := tcpFind(t, 0, sa.(*unix.SockaddrInet4).Port, 2); !ok { // SYN_SENT
		t.Fatal("DialFor waits, but its connect is not in /proc/net/tcp as SYN_SENT")
	}
	sys.Exit(p.pid, actor.Kill)
	select {
	case r := <-ch:
		if !errors.Is(r.err, netio.ErrClosed) {
			t.Fatalf("DialFor for an owner that died mid-connect: %v, %v; want ErrClosed", r.cn, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("DialFor did not return")
	}
}
