//go:build linux

package netio_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// The poller: it exits when nothing is left for it, a readiness wake-up
// (ioReady) never reaches a handler, and Shutdown waits for the poller.

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
	case <-time.After(10 * time.Second):
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

// A Recv that times out while the poller wakes it: the ioReady is in the
// owner's mailbox by the time the owner takes s.mu back, and the owner
// removes it with a zero-timeout receive. But a message that another sender
// began to push before it and has not linked yet hides it from the consumer
// (the mailbox lane's design note: "head == tail does not mean empty"): a
// zero-timeout receive that does not wait such pushes out misses it, and
// the ioReady reaches the handler later.
//
// A sender is caught between its push's swap and its link only by bad luck
// (its thread descheduled there), so without that wait this test passes as
// it stands; it fails, every time, with the window widened by a copy
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
	missed := 0
	for i := 0; i < 3; i++ {
		cn, _ := listenAccept(t, p)
		// locked is set once the test holds s.mu; the hook reports whether
		// it was set when the wait failed, that is whether the owner will
		// find s.mu held.
		var locked atomic.Bool
		timedOut := make(chan bool, 1)
		restore := netio.OnWaitFailed(cn, func() {
			select {
			case timedOut <- locked.Load():
			default:
			}
		})
		t.Cleanup(restore)
		res := make(chan error, 1)
		sys.Send(pid, doFn{func(c *actor.Context) {
			_, err := cn.Recv(c, 0, 50*time.Millisecond)
			res <- err
		}, make(chan struct{})})
		// Parked alone is not enough: the owner is parked before it takes
		// the doFn too, and a test that held s.mu then kept its Recv from
		// ever starting its wait (and timed out below). A Recv that has
		// already timed out (a busy machine) missed the window: try again.
		eventually(t, 30*time.Second, "the owner waits in Recv", func() bool {
			return len(res) > 0 || cn.RecvWaiting() && state() == "parked"
		})
		if len(res) > 0 {
			<-res
			restore()
			cn.Close()
			if missed++; missed > 100 {
				t.Fatal("the Recv timed out before the test saw it wait 100 times")
			}
			i--
			continue
		}
		var once sync.Once
		held := cn.HoldMu()
		locked.Store(true)
		unlock := func() { once.Do(held) }
		t.Cleanup(unlock) // a failure below must not leave the owner (and Shutdown) on the lock
		// The timeout fires; the owner leaves its receive and waits for s.mu.
		if !recvChan(t, timedOut, 30*time.Second, "the owner's Recv times out") {
			// Its 50 ms ran out before the test held s.mu (a busy
			// machine): the window this test needs was missed. Let the
			// Recv finish and try again.
			unlock()
			recvChan(t, res, 30*time.Second, "Recv's result")
			restore()
			cn.Close()
			if missed++; missed > 100 {
				t.Fatal("the Recv timed out before the test held its lock 100 times")
			}
			i--
			continue
		}
		sent := make(chan struct{})
		go func() { sys.Send(pid, stalledMsg{}); close(sent) }()
		eventually(t, 30*time.Second, "a send under way", func() bool { info, _ := sys.Info(pid); return info.MailboxLen > 0 })
		time.Sleep(time.Millisecond) // past its swap (with the overlay, it stays there a while)
		if !cn.WakeWaiterLocked() {
			t.Fatal("no waiter to wake")
		}
		unlock()
		if err := recvChan(t, res, 30*time.Second, "Recv's result"); err != actor.ErrTimeout {
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
// check right after it would otherwise find both fds still open about one
// time in five.
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
