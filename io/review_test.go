package netio_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// Bugs found in a review of io/, each pinned here (every test failed on the
// code before its fix).

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

// A re-arm (a kick queued for the poller) then the last Close: the poller
// must still exit (it leaked with its fds, and Stop hung).
func TestPollerExitsAfterKickThenClose(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	cli.Write([]byte("x"))
	awaitDelivered(t, cli)
	cn.SetActive(netio.Once) // input waiting: a kick
	cn.Close()
	eventually(t, 5*time.Second, "the poller exits", func() bool { return !netio.PollerRunning(sys) })
	done := make(chan struct{})
	go func() { netio.Stop(sys); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Stop never returned")
	}
}

// A Close racing a Recv's timeout: the waiter's ioReady must never reach
// the handler.
func TestStaleIoReadyNeverLeaks(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	for i := 0; i < 200; i++ {
		cn, _ := listenAccept(t, p)
		d := time.Duration(500+rand.IntN(1000)) * time.Microsecond
		go func() { time.Sleep(d); cn.Close() }()
		p.do(t, func(c *actor.Context) {
			for {
				if _, err := cn.Recv(c, 0, time.Millisecond); err != actor.ErrTimeout {
					return
				}
			}
		})
		p.do(t, func(c *actor.Context) {})
		for len(p.inbox) > 0 {
			if m := <-p.inbox; strings.HasPrefix(fmt.Sprintf("%T", m), "netio.io") {
				t.Fatalf("iteration %d: internal %T reached the handler", i, m)
			}
		}
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
	for range 4 {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			defer c.Close()
		}
	}
	type res struct {
		cn  *netio.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		cn, err := netio.DialFor(sys, p.pid, addr, 5*time.Second)
		ch <- res{cn, err}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		select {
		case r := <-ch:
			t.Skipf("the connect did not stay in progress: %v", r.err)
		default:
		}
		if _, _, ok := tcpFind(t, 0, sa.(*unix.SockaddrInet4).Port, 2); ok { // SYN sent
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("DialFor's connect never showed in /proc/net/tcp")
		}
	}
	sys.Exit(p.pid, actor.Kill)
	select {
	case r := <-ch:
		if !errors.Is(r.err, netio.ErrClosed) {
			t.Fatalf("DialFor for an owner that died mid-connect: %v, %v; want ErrClosed", r.cn, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("DialFor did not return")
	}
}

// A Recv that times out while the poller wakes it: the ioReady is in the
// owner's mailbox by the time the owner takes s.mu back, and the owner
// removes it with a zero-timeout receive. But a message that another sender
// began to push before it and has not linked yet hides it from the consumer
// (the mailbox lane's design note: "head == tail does not mean empty"):
// the zero-timeout receive missed it, and the ioReady reached the handler
// later (found in review).
//
// A sender is caught between its push's swap and its link only by bad luck
// (its thread descheduled there), so this test passes on the old code as
// it stands; it fails there, every time, with the window widened by a copy
// of mailbox/lane.go whose Push sleeps between the two for a message with a
// StallPushForTest method (stalledMsg), given to go test -overlay:
//
//	prev := l.head.Swap(n)
//	if _, ok := v.(interface{ StallPushForTest() }); ok {
//		time.Sleep(50 * time.Millisecond)
//	}
//	prev.next.Store(n)
func TestLateIoReadyBehindUnlinkedSendNeverLeaks(t *testing.T) {
	sys := startSys(t)
	var leaked atomic.Int64
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch m := msg.(type) {
		case doFn:
			m.f(c)
			close(m.done)
		case stalledMsg:
		default:
			if strings.HasPrefix(fmt.Sprintf("%T", m), "netio.io") {
				leaked.Add(1)
			}
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	p := &probe{pid: pid, sys: sys}
	state := func() string { info, _ := sys.Info(pid); return info.State }
	// The owner's Recv has left its receive (timed out) and is taking s.mu
	// back. (Its state turning running was not enough: under load the owner
	// could still be in its receive, which then took the next message aside,
	// and the test timed out below, then hung in its cleanup on the lock it
	// held.)
	for i := 0; i < 3; i++ {
		cn, _ := listenAccept(t, p)
		timedOut := make(chan struct{}, 1)
		restore := netio.OnWaitFailed(cn, func() {
			select {
			case timedOut <- struct{}{}:
			default:
			}
		})
		t.Cleanup(restore)
		res := make(chan error, 1)
		sys.Send(pid, doFn{func(c *actor.Context) {
			_, err := cn.Recv(c, 0, 10*time.Millisecond)
			res <- err
		}, make(chan struct{})})
		eventually(t, 5*time.Second, "the owner waits in Recv", func() bool { return state() == "parked" })
		var once sync.Once
		held := cn.HoldMu()
		unlock := func() { once.Do(held) }
		t.Cleanup(unlock) // a failure below must not leave the owner (and Shutdown) on the lock
		// The timeout fires; the owner leaves its receive and waits for s.mu.
		recvChan(t, timedOut, 5*time.Second, "the owner's Recv times out")
		sent := make(chan struct{})
		go func() { sys.Send(pid, stalledMsg{}); close(sent) }()
		eventually(t, 5*time.Second, "a send under way", func() bool { info, _ := sys.Info(pid); return info.MailboxLen > 0 })
		time.Sleep(time.Millisecond) // past its swap (with the overlay, it stays there a while)
		if !cn.WakeWaiterLocked() {
			t.Fatal("no waiter to wake")
		}
		unlock()
		if err := recvChan(t, res, 5*time.Second, "Recv's result"); err != actor.ErrTimeout {
			t.Fatalf("Recv: %v, want ErrTimeout", err)
		}
		<-sent
		p.do(t, func(c *actor.Context) {}) // everything sent before has been handled
		cn.Close()
		if n := leaked.Load(); n != 0 {
			t.Fatalf("iteration %d: %d internal ioReady message(s) reached the handler", i, n)
		}
	}
}

// stalledMsg is a message whose push an overlay of mailbox/lane.go may hold
// between its swap and its link (TestLateIoReadyBehindUnlinkedSendNeverLeaks).
type stalledMsg struct{}

func (stalledMsg) StallPushForTest() {}

// Shutdown returns only once the poller goroutine has exited and closed its
// epoll fd and eventfd, as with every goroutine the System started: a leak
// check right after it found both fds still open about one time in five
// (found by a new user's example; it failed here before).
func TestShutdownWaitsForPoller(t *testing.T) {
	if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil { // Go's own netpoller opens its fds once, first
		l.Close()
	}
	for i := 0; i < 20; i++ {
		before := fdCount(t)
		sys, err := actor.Start(actor.Config{})
		if err != nil {
			t.Fatal(err)
		}
		addr := echoServer(t, sys)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, 4)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = sys.Shutdown(ctx)
		cancel()
		c.Close()
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		if netio.PollerRunning(sys) {
			t.Fatalf("round %d: the poller outlived Shutdown", i)
		}
		if n := fdCount(t); n > before {
			t.Fatalf("round %d: %d fds open after Shutdown (and the test's conn closed), %d before", i, n, before)
		}
	}
}
