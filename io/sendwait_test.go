//go:build linux

package netio_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// SendWait: Send with gen_tcp's high and low watermarks and send timeout.

const swChunk = 64 << 10

// streamAt is n bytes of the test stream from offset off (pattern's bytes:
// byte i of the stream is byte(i*7 + i/251)), so a lost, repeated or
// foreign chunk shows.
func streamAt(off, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		i := off + j
		b[j] = byte(i*7 + i/251)
	}
	return b
}

// smallBuffers shrinks the kernel's send buffer of cn (a few KiB, and no
// autotuning), so that the queue above it, the watermarks' business, fills
// after a couple of hundred KiB (the peer's receive buffer) rather than
// megabytes. Not the peer's receive buffer: one far below loopback's MSS
// (64 KiB) stalls the sender on its persist timer, for seconds.
func smallBuffers(t testing.TB, cn *netio.Conn, _ net.Conn) {
	t.Helper()
	if err := unix.SetsockoptInt(cn.FD(), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096); err != nil {
		t.Fatal(err)
	}
}

// fillBusy sends the stream with SendWait and timeout 0 (only look) until
// the Conn is busy (ErrTimeout), the peer not reading. It returns how many
// bytes were sent.
func fillBusy(c *actor.Context, cn *netio.Conn) (int, error) {
	for sent := 0; sent < 1<<30; sent += swChunk {
		err := cn.SendWait(c, streamAt(sent, swChunk), 0)
		if errors.Is(err, actor.ErrTimeout) {
			return sent, nil
		}
		if err != nil {
			return sent, err
		}
	}
	return 0, errors.New("1 GiB sent to a peer that does not read, and never busy")
}

// noInternal checks that none of ms is one of netio's internal messages.
func noInternal(t testing.TB, ms ...any) {
	t.Helper()
	for _, m := range ms {
		if strings.HasPrefix(fmt.Sprintf("%T", m), "netio.io") {
			t.Fatalf("internal %T reached a handler", m)
		}
	}
}

// drainInbox takes every message p has forwarded so far.
func drainInbox(p *probe) []any {
	var ms []any
	for {
		select {
		case m := <-p.inbox:
			ms = append(ms, m)
		default:
			return ms
		}
	}
}

func actorState(sys *actor.System, pid actor.Pid) string {
	info, _ := sys.Info(pid)
	return info.State
}

// A peer that does not read makes SendWait block, with the queue held near
// the high watermark; the peer reading unblocks it, and every byte
// arrives, in order. The kernel's buffers are left as they are (megabytes).
func TestSendWaitBlocksUntilPeerReads(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	low, high := cn.Watermarks()
	if low != netio.DefaultLowWatermark || high != netio.DefaultHighWatermark {
		t.Fatalf("default watermarks %d, %d", low, high)
	}
	var sent, maxPending atomic.Int64
	var stop atomic.Bool
	res := make(chan error, 1)
	sys.Send(p.pid, doFn{func(c *actor.Context) {
		for !stop.Load() {
			off := int(sent.Load())
			if err := cn.SendWait(c, streamAt(off, swChunk), actor.Infinity); err != nil {
				res <- err
				return
			}
			sent.Add(swChunk)
			if n := int64(cn.Pending()); n > maxPending.Load() {
				maxPending.Store(n)
			}
		}
		res <- cn.Close() // lingers: the peer reads the rest, then EOF
	}, make(chan struct{})})
	// The kernel's send buffer grows (autotuning, up to tcp_wmem's 4 MiB)
	// while the sender waits, so it may go on a few times before the
	// kernel is full and it stays blocked: the portable backend, which
	// hands the kernel a chunk at a time from a goroutine, is seen parked
	// on the way there. 4 MiB more is no longer the kernel's growth.
	var at int64
	for first := int64(-1); ; {
		eventually(t, 20*time.Second, "SendWait blocks on a peer that does not read", func() bool {
			return cn.SendWaiters() == 1 && actorState(sys, p.pid) == "parked"
		})
		at = sent.Load()
		if first < 0 {
			// Above high when it began to wait; a flush since may have
			// written it down, but not to low (then it would not wait).
			if n := cn.Pending(); n <= low {
				t.Fatalf("blocked with %d bytes queued, watermarks %d, %d", n, low, high)
			}
			first = at
		}
		time.Sleep(20 * time.Millisecond) // a negative check: it stays blocked
		if sent.Load() == at && len(res) == 0 {
			break
		}
		if len(res) != 0 || sent.Load() > first+8<<20 {
			t.Fatalf("SendWait went on (%d bytes sent, then %d) with the peer not reading", first, sent.Load())
		}
	}
	// The peer reads: the sender goes on, and stops 8 MiB later.
	var got bytes.Buffer
	readErr := make(chan error, 1)
	go func() {
		cli.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, 256<<10)
		for {
			n, err := cli.Read(buf)
			got.Write(buf[:n])
			if int64(got.Len()) > at+8<<20 {
				stop.Store(true)
			}
			if err == io.EOF {
				readErr <- nil
				return
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	if err := recvChan(t, res, 30*time.Second, "the sender's end"); err != nil {
		t.Fatalf("SendWait/Close: %v", err)
	}
	if err := recvChan(t, readErr, 30*time.Second, "the peer's EOF"); err != nil {
		t.Fatal(err)
	}
	n := int(sent.Load())
	want := streamAt(0, n)
	if got.Len() != n || crc32.ChecksumIEEE(got.Bytes()) != crc32.ChecksumIEEE(want) || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("peer read %d bytes, want the %d sent, in order", got.Len(), n)
	}
	// What one SendWait queues is at most its b above the high watermark.
	if m := maxPending.Load(); m > int64(high+swChunk) {
		t.Fatalf("%d bytes queued after a SendWait, over high (%d) + one chunk", m, high)
	}
}

// A SendWait that times out has queued nothing of its b: the peer reads
// exactly what the SendWaits that returned nil sent, and the stream goes
// on unbroken after the timeout. timeout 0 only looks; negative is an error.
func TestSendWaitTimeoutQueuesNothing(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	smallBuffers(t, cn, cli)
	poison := bytes.Repeat([]byte{0xff}, swChunk)
	var sent int
	p.do(t, func(c *actor.Context) {
		var err error
		if sent, err = fillBusy(c, cn); err != nil {
			t.Fatal(err)
		}
		before := cn.Pending()
		start := time.Now()
		if err := cn.SendWait(c, poison, 30*time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
			t.Fatalf("SendWait on a busy Conn: %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d < 25*time.Millisecond {
			t.Errorf("timed out after %v, want 30ms", d)
		}
		if n := cn.Pending(); n > before {
			t.Fatalf("a timed-out SendWait queued %d bytes", n-before)
		}
		start = time.Now()
		if err := cn.SendWait(c, poison, 0); !errors.Is(err, actor.ErrTimeout) {
			t.Fatalf("SendWait(0) on a busy Conn: %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d > 2*time.Second { // a wait would be for ever; 2 s is for a loaded machine
			t.Errorf("SendWait(0) took %v: it should only look", d)
		}
		if err := cn.SendWait(c, poison, -1); !errors.Is(err, actor.ErrNegativeTimeout) {
			t.Fatalf("negative timeout: %v", err)
		}
		if cn.SendWaiters() != 0 {
			t.Fatalf("%d waiters left after the timeouts", cn.SendWaiters())
		}
	})
	// The peer reads what was sent; then the stream goes on after it.
	cli.SetReadDeadline(time.Now().Add(20 * time.Second))
	got := make([]byte, sent)
	if _, err := io.ReadFull(cli, got); err != nil || !bytes.Equal(got, streamAt(0, sent)) {
		t.Fatalf("peer read %d bytes: %v (or the bytes differ)", len(got), err)
	}
	p.do(t, func(c *actor.Context) {
		if err := cn.SendWait(c, streamAt(sent, 1000), 10*time.Second); err != nil {
			t.Fatal(err)
		}
		cn.Close()
	})
	rest, err := io.ReadAll(cli)
	if err != nil || !bytes.Equal(rest, streamAt(sent, 1000)) {
		t.Fatalf("after the timeouts the peer read %d bytes, %v; want the next 1000 of the stream, then EOF", len(rest), err)
	}
	noInternal(t, drainInbox(p)...)
}

// blockSendWait makes p fill cn and then wait in SendWait (no timeout); it
// returns once p waits, with the channel its result comes on and how many
// bytes p sent before it.
func blockSendWait(t *testing.T, sys *actor.System, p *probe, cn *netio.Conn) (<-chan error, int) {
	t.Helper()
	res := make(chan error, 1)
	var sent atomic.Int64
	before := cn.SendWaiters()
	sys.Send(p.pid, doFn{func(c *actor.Context) {
		n, err := fillBusy(c, cn)
		if err != nil {
			res <- err
			return
		}
		sent.Store(int64(n))
		res <- cn.SendWait(c, streamAt(n, swChunk), actor.Infinity)
	}, make(chan struct{})})
	eventually(t, 10*time.Second, "the sender waits in SendWait", func() bool {
		if len(res) > 0 {
			t.Fatalf("SendWait returned %v on a peer that does not read", <-res)
		}
		return cn.SendWaiters() > before && actorState(sys, p.pid) == "parked"
	})
	return res, int(sent.Load())
}

// Whatever ends a Conn ends the SendWaits blocked on it, with the right
// error; none hangs, and no waiter is left behind.
func TestSendWaitEnds(t *testing.T) {
	t.Run("Close", func(t *testing.T) {
		sys := startSys(t)
		p := newProbe(t, sys)
		cn, cli := listenAccept(t, p)
		smallBuffers(t, cn, cli)
		res, _ := blockSendWait(t, sys, p, cn)
		go cn.Close() // by another goroutine
		if err := recvChan(t, res, 5*time.Second, "SendWait's end"); !errors.Is(err, netio.ErrClosed) {
			t.Fatalf("SendWait after Close: %v, want ErrClosed", err)
		}
		noInternal(t, drainInbox(p)...)
	})
	t.Run("OwnerKilled", func(t *testing.T) {
		sys := startSys(t)
		owner, sender := newProbe(t, sys), newProbe(t, sys)
		cn, cli := listenAccept(t, owner)
		smallBuffers(t, cn, cli)
		res, _ := blockSendWait(t, sys, sender, cn) // not the owner
		sys.Exit(owner.pid, actor.Kill)
		if err := recvChan(t, res, 5*time.Second, "SendWait's end"); !errors.Is(err, netio.ErrClosed) {
			t.Fatalf("SendWait after the owner's death: %v, want ErrClosed", err)
		}
		sender.do(t, func(*actor.Context) {})
		noInternal(t, drainInbox(sender)...)
	})
	t.Run("WaiterKilled", func(t *testing.T) {
		sys := startSys(t)
		p := newProbe(t, sys)
		cn, cli := listenAccept(t, p)
		smallBuffers(t, cn, cli)
		blockSendWait(t, sys, p, cn) // the owner waits
		sys.Exit(p.pid, actor.Kill)
		eventually(t, 5*time.Second, "the owner dies", func() bool { return !sys.Alive(p.pid) })
		eventually(t, 5*time.Second, "its death closes the Conn", func() bool { return errors.Is(cn.Send([]byte("x")), netio.ErrClosed) })
		if n := cn.SendWaiters(); n != 0 {
			t.Fatalf("%d waiters left", n)
		}
	})
	t.Run("NonOwnerKilled", func(t *testing.T) {
		sys := startSys(t)
		owner, sender := newProbe(t, sys), newProbe(t, sys)
		cn, cli := listenAccept(t, owner)
		smallBuffers(t, cn, cli)
		blockSendWait(t, sys, sender, cn)
		sys.Exit(sender.pid, actor.Kill)
		eventually(t, 5*time.Second, "the killed sender's waiter is gone", func() bool { return cn.SendWaiters() == 0 })
		if err := cn.Send([]byte("x")); err != nil {
			t.Fatalf("the Conn broke when a sender died: %v", err)
		}
		cn.Close()
	})
	t.Run("PlainGoroutine", func(t *testing.T) {
		sys := startSys(t)
		p := newProbe(t, sys)
		cn, cli := listenAccept(t, p)
		smallBuffers(t, cn, cli)
		res := make(chan error, 1)
		go func() {
			sent, err := fillBusy(nil, cn)
			if err != nil {
				res <- err
				return
			}
			res <- cn.SendWait(nil, streamAt(sent, swChunk), actor.Infinity)
		}()
		eventually(t, 10*time.Second, "the goroutine waits", func() bool { return cn.SendWaiters() == 1 })
		cn.Close()
		if err := recvChan(t, res, 5*time.Second, "SendWait's end"); !errors.Is(err, netio.ErrClosed) {
			t.Fatalf("plain goroutine's SendWait after Close: %v, want ErrClosed", err)
		}
	})
	t.Run("CloseWrite", func(t *testing.T) {
		sys := startSys(t)
		p := newProbe(t, sys)
		cn, cli := listenAccept(t, p)
		smallBuffers(t, cn, cli)
		res, _ := blockSendWait(t, sys, p, cn)
		if err := cn.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if err := recvChan(t, res, 5*time.Second, "SendWait's end"); !errors.Is(err, netio.ErrWriteClosed) {
			t.Fatalf("SendWait after CloseWrite: %v, want ErrWriteClosed", err)
		}
		cn.Close()
	})
	t.Run("PeerReset", func(t *testing.T) {
		sys := startSys(t)
		p := newProbe(t, sys)
		cn, cli := listenAccept(t, p)
		smallBuffers(t, cn, cli)
		res, _ := blockSendWait(t, sys, p, cn)
		cli.(*net.TCPConn).SetLinger(0)
		cli.Close() // input unread: RST
		err := recvChan(t, res, 5*time.Second, "SendWait's end")
		if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("SendWait on a reset connection: %v, want a wrapped EPIPE or ECONNRESET", err)
		}
		cn.Close()
	})
	t.Run("Shutdown", func(t *testing.T) {
		sys := startSys(t)
		owner, sender := newProbe(t, sys), newProbe(t, sys)
		cn, cli := listenAccept(t, owner)
		smallBuffers(t, cn, cli)
		cn.SetLinger(0) // Shutdown need not wait for the peer to read the queue
		blockSendWait(t, sys, sender, cn)
		res := make(chan error, 1)
		go func() { res <- cn.SendWait(nil, []byte("x"), actor.Infinity) }()
		eventually(t, 5*time.Second, "both wait", func() bool { return cn.SendWaiters() == 2 })
		done := make(chan error, 1)
		go func() { done <- sys.Shutdown(t.Context()) }()
		if err := recvChan(t, res, 10*time.Second, "the goroutine's SendWait"); !errors.Is(err, netio.ErrClosed) {
			t.Fatalf("SendWait at Shutdown: %v, want ErrClosed", err)
		}
		if err := recvChan(t, done, 10*time.Second, "Shutdown"); err != nil {
			t.Fatal(err)
		}
	})
}

// A SendWait that blocks hands the scheduler role off: on a System with
// one scheduler, other actors keep running while it waits.
func TestSendWaitHandsOffRole(t *testing.T) {
	sys := startSysCfg(t, actor.Config{Schedulers: 1})
	p, q := newProbe(t, sys), newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	smallBuffers(t, cn, cli)
	res, _ := blockSendWait(t, sys, p, cn)
	for range 3 {
		q.do(t, func(*actor.Context) {}) // runs on the one scheduler, or times out
	}
	echo, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if r, ok := msg.(actor.Request); ok {
			c.Reply(r, r.Msg)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := sys.Call(echo, "ping", 5*time.Second); err != nil || r != "ping" {
		t.Fatalf("Call while an actor waits in SendWait: %v, %v", r, err)
	}
	cn.Close()
	if err := recvChan(t, res, 5*time.Second, "SendWait's end"); !errors.Is(err, netio.ErrClosed) {
		t.Fatal(err)
	}
}

// The owner blocked in Recv and another actor blocked in SendWait on the
// same Conn: each wait ends when its own condition holds (one waiter field
// for both would let the second wait overwrite the first).
func TestSendWaitBesideRecv(t *testing.T) {
	sys := startSys(t)
	owner, writer := newProbe(t, sys), newProbe(t, sys)
	cn, cli := listenAccept(t, owner)
	smallBuffers(t, cn, cli)
	got := make(chan string, 1)
	sys.Send(owner.pid, doFn{func(c *actor.Context) {
		b, err := cn.Recv(c, 5, 10*time.Second)
		got <- fmt.Sprintf("%s %v", b, err)
	}, make(chan struct{})})
	eventually(t, 5*time.Second, "the owner waits in Recv", func() bool { return actorState(sys, owner.pid) == "parked" })
	var sent atomic.Int64
	res := make(chan error, 1)
	sys.Send(writer.pid, doFn{func(c *actor.Context) {
		n, err := fillBusy(c, cn)
		if err != nil {
			res <- err
			return
		}
		// The total is published before the SendWait: stored after it, the
		// peer could read the last byte first, find no total yet, and sit
		// in Read until its deadline (a flake under -race).
		sent.Store(int64(n + swChunk))
		err = cn.SendWait(c, streamAt(n, swChunk), 10*time.Second)
		res <- err
	}, make(chan struct{})})
	eventually(t, 10*time.Second, "the writer waits in SendWait", func() bool { return cn.SendWaiters() == 1 })
	// The peer reads: the writer's wait ends, the owner's goes on.
	buf := make([]byte, 1<<20)
	var read int
	readDone := make(chan error, 1)
	go func() {
		cli.SetReadDeadline(time.Now().Add(20 * time.Second))
		for {
			n, err := cli.Read(buf)
			read += n
			if err != nil {
				readDone <- err
				return
			}
			if s := sent.Load(); s > 0 && int64(read) == s {
				readDone <- nil
				return
			}
		}
	}()
	if err := recvChan(t, res, 10*time.Second, "the writer's SendWait"); err != nil {
		t.Fatal(err)
	}
	if err := recvChan(t, readDone, 20*time.Second, "the peer's read"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("Recv ended with no input: %s", <-got)
	}
	cli.Write([]byte("hello"))
	if r := recvChan(t, got, 10*time.Second, "the owner's Recv"); r != "hello <nil>" {
		t.Fatalf("Recv: %s", r)
	}
	cn.Close()
	writer.do(t, func(*actor.Context) {})
	noInternal(t, drainInbox(writer)...)
	noInternal(t, drainInbox(owner)...)
}

func TestSetWatermarks(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, _ := listenAccept(t, p)
	for _, wm := range [][2]int{{0, 0}, {0, 10}, {-1, 10}, {10, 9}, {5, -1}, {1, 0}} {
		if err := cn.SetWatermarks(wm[0], wm[1]); !errors.Is(err, netio.ErrBadWatermarks) {
			t.Errorf("SetWatermarks(%d, %d): %v, want ErrBadWatermarks", wm[0], wm[1], err)
		}
	}
	if low, high := cn.Watermarks(); low != netio.DefaultLowWatermark || high != netio.DefaultHighWatermark {
		t.Fatalf("bad watermarks changed them: %d, %d", low, high)
	}
	for _, wm := range [][2]int{{1, 1}, {7, 1 << 40}, {4096, 8192}} {
		if err := cn.SetWatermarks(wm[0], wm[1]); err != nil {
			t.Errorf("SetWatermarks(%d, %d): %v", wm[0], wm[1], err)
		}
		if low, high := cn.Watermarks(); low != wm[0] || high != wm[1] {
			t.Errorf("after SetWatermarks(%d, %d): %d, %d", wm[0], wm[1], low, high)
		}
	}
	if err := cn.SetSendTimeoutClose(true); err != nil {
		t.Fatal(err)
	}
	cn.Close()
	if err := cn.SetWatermarks(1, 2); !errors.Is(err, netio.ErrClosed) {
		t.Errorf("SetWatermarks on a closed Conn: %v, want ErrClosed", err)
	}
	if err := cn.SetSendQueueLimit(1 << 20); !errors.Is(err, netio.ErrClosed) {
		t.Errorf("SetSendQueueLimit on a closed Conn: %v, want ErrClosed", err)
	}
	if err := cn.SetSendTimeoutClose(false); !errors.Is(err, netio.ErrClosed) {
		t.Errorf("SetSendTimeoutClose on a closed Conn: %v, want ErrClosed", err)
	}
	p.do(t, func(c *actor.Context) {
		if err := cn.SendWait(c, []byte("x"), 0); !errors.Is(err, netio.ErrClosed) {
			t.Errorf("SendWait on a closed Conn: %v, want ErrClosed", err)
		}
	})
}

// SetWatermarks takes effect at once: raising low to the queue wakes a
// blocked SendWait; lowering high below the queue makes the next one wait.
func TestSetWatermarksWakesAndBlocks(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	smallBuffers(t, cn, cli)
	res, _ := blockSendWait(t, sys, p, cn)
	if err := cn.SetWatermarks(1<<30, 1<<30); err != nil {
		t.Fatal(err)
	}
	if err := recvChan(t, res, 5*time.Second, "SendWait's end"); err != nil {
		t.Fatalf("SendWait woken by SetWatermarks: %v", err)
	}
	p.do(t, func(c *actor.Context) {
		if err := cn.SendWait(c, []byte("x"), 0); err != nil {
			t.Fatalf("below the new high watermark: %v", err)
		}
		if err := cn.SetWatermarks(1, 1); err != nil {
			t.Fatal(err)
		}
		if err := cn.SendWait(c, []byte("x"), 0); !errors.Is(err, actor.ErrTimeout) {
			t.Fatalf("above the new high watermark: %v, want ErrTimeout", err)
		}
		if err := cn.SendWait(c, nil, 0); !errors.Is(err, actor.ErrTimeout) {
			t.Fatalf("an empty SendWait above high: %v, want ErrTimeout (it waits too)", err)
		}
	})
	cn.Close()
}

// busy ends at the low watermark, not at the high one (sock.go,
// "Watermarks": a hysteresis): with the queue between the two, a SendWait
// on a busy Conn still waits. The queue is made far larger than what the
// kernel may still take from it while the test runs (the peer's free
// receive window), so it stays between the watermarks set here.
func TestSendWaitBusyUntilLowWatermark(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	smallBuffers(t, cn, cli)
	p.do(t, func(c *actor.Context) { // t.Error and return: a Fatal here would strand the actor
		if _, err := fillBusy(c, cn); err != nil {
			t.Error(err)
			return
		}
		for range 16 {
			if err := cn.Send(make([]byte, swChunk)); err != nil {
				t.Error(err)
				return
			}
		}
		if err := cn.SetWatermarks(1, 1<<40); err != nil {
			t.Error(err)
			return
		}
		if err := cn.SendWait(c, []byte("x"), 0); !errors.Is(err, actor.ErrTimeout) {
			t.Errorf("SendWait on a busy Conn with %d bytes queued, low 1, high 1<<40: %v, want ErrTimeout (busy until the queue is down to low)", cn.Pending(), err)
		}
	})
	cn.Close()
}

// SetSendTimeoutClose: a timeout closes the Conn abortively: SendWait says
// ErrTimeout, later calls ErrClosed, and the peer sees a reset, not a cut
// stream ending in EOF.
func TestSendWaitTimeoutClose(t *testing.T) {
	sys := startSys(t)
	p, other := newProbe(t, sys), newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	smallBuffers(t, cn, cli)
	otherRes, sent := blockSendWait(t, sys, other, cn)
	if err := cn.SetSendTimeoutClose(true); err != nil {
		t.Fatal(err)
	}
	p.do(t, func(c *actor.Context) {
		err := cn.SendWait(c, []byte("late"), 20*time.Millisecond)
		if !errors.Is(err, actor.ErrTimeout) || !strings.Contains(err.Error(), "closed") {
			t.Fatalf("SendWait: %v, want ErrTimeout saying the Conn is closed", err)
		}
		if err := cn.Send([]byte("x")); !errors.Is(err, netio.ErrClosed) {
			t.Fatalf("Send after the timeout closed the Conn: %v", err)
		}
	})
	if err := recvChan(t, otherRes, 5*time.Second, "the other SendWait"); !errors.Is(err, netio.ErrClosed) {
		t.Fatalf("another SendWait when the timeout closed the Conn: %v, want ErrClosed", err)
	}
	readReset(t, cli, sent) // the queue, over high, was discarded
	noInternal(t, drainInbox(p)...)
}

// A SendWait that times out just as the poller wakes it (the ioReady sent
// after its receive gave up, before it took the lock back): it returns
// ErrTimeout with nothing queued, and removes the ioReady, which never
// reaches the handler.
func TestSendWaitLateWakeNeverLeaks(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	smallBuffers(t, cn, cli)
	// The timed-out SendWait reports its timeout and then waits until the
	// test holds s.mu before it takes s.mu back: its 20 ms may run out
	// before the test has taken the lock (a busy machine), and it must not
	// find the lock free and leave before the wake-up below.
	timedOut := make(chan struct{}, 1)
	locked := make(chan struct{})
	var lockedOnce sync.Once
	letGo := func() { lockedOnce.Do(func() { close(locked) }) }
	t.Cleanup(letGo)
	restore := netio.OnWaitFailed(cn, func() {
		select {
		case timedOut <- struct{}{}:
		default:
		}
		<-locked
	})
	t.Cleanup(restore)
	var before int
	res := make(chan error, 1)
	sys.Send(p.pid, doFn{func(c *actor.Context) {
		if _, err := fillBusy(c, cn); err != nil {
			res <- err
			return
		}
		before = cn.Pending()
		res <- cn.SendWait(c, bytes.Repeat([]byte{0xff}, swChunk), 20*time.Millisecond)
	}, make(chan struct{})})
	eventually(t, 30*time.Second, "SendWait waits", func() bool { return cn.SendWaiters() == 1 })
	var once sync.Once
	held := cn.HoldMu()
	unlock := func() { once.Do(held) }
	t.Cleanup(unlock)
	letGo()
	recvChan(t, timedOut, 30*time.Second, "SendWait's timeout")
	if n := cn.WakeSendersLocked(); n != 1 {
		t.Fatalf("woke %d waiters, want 1", n)
	}
	unlock()
	if err := recvChan(t, res, 30*time.Second, "SendWait's result"); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("SendWait: %v, want ErrTimeout", err)
	}
	if n := cn.Pending(); n > before {
		t.Fatalf("a timed-out SendWait queued %d bytes", n-before)
	}
	p.do(t, func(*actor.Context) {}) // everything sent before has been handled
	noInternal(t, drainInbox(p)...)
	cn.Close()
}

// record is one framed record of the concurrent tests: sender, seq, length,
// then length bytes that depend on all three.
func record(id, seq, n int) []byte {
	b := make([]byte, 12+n)
	binary.BigEndian.PutUint32(b[0:], uint32(id))
	binary.BigEndian.PutUint32(b[4:], uint32(seq))
	binary.BigEndian.PutUint32(b[8:], uint32(n))
	for j := range n {
		b[12+j] = byte(id*31 + seq*7 + j)
	}
	return b
}

// readRecord reads one record; it returns id, seq, and whether the payload
// is the one record(id, seq, n) makes.
func readRecord(r *bufio.Reader) (id, seq int, ok bool, err error) {
	var h [12]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, 0, false, err
	}
	id, seq = int(binary.BigEndian.Uint32(h[0:])), int(binary.BigEndian.Uint32(h[4:]))
	n := int(binary.BigEndian.Uint32(h[8:]))
	if n > 1<<20 {
		return id, seq, false, fmt.Errorf("record length %d: the stream is corrupt", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return id, seq, false, err
	}
	return id, seq, bytes.Equal(b, record(id, seq, n)[12:]), nil
}

// Several actors SendWait on one Conn at once, the watermarks small: each
// record arrives whole (no interleaving), each sender's in its order, none
// lost or repeated, and no internal message reaches a sender.
func TestSendWaitConcurrentSenders(t *testing.T) {
	sys := startSys(t)
	owner := newProbe(t, sys)
	cn, cli := listenAccept(t, owner)
	smallBuffers(t, cn, cli)
	if err := cn.SetWatermarks(4<<10, 8<<10); err != nil {
		t.Fatal(err)
	}
	const senders, records = 4, 60
	ps := make([]*probe, senders)
	res := make(chan error, senders)
	for i := range ps {
		ps[i] = newProbe(t, sys)
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		sys.Send(ps[i].pid, doFn{func(c *actor.Context) {
			for seq := range records {
				if err := cn.SendWait(c, record(i, seq, 1+rng.IntN(40000)), 20*time.Second); err != nil {
					res <- fmt.Errorf("sender %d record %d: %w", i, seq, err)
					return
				}
			}
			res <- nil
		}, make(chan struct{})})
	}
	eventually(t, 10*time.Second, "every sender waits", func() bool { return cn.SendWaiters() == senders })
	r := bufio.NewReader(cli)
	cli.SetReadDeadline(time.Now().Add(60 * time.Second))
	next := make([]int, senders)
	for range senders * records {
		id, seq, ok, err := readRecord(r)
		if err != nil {
			t.Fatalf("after %v records: %v", next, err)
		}
		if id >= senders || seq != next[id] || !ok {
			t.Fatalf("record (sender %d, seq %d, intact %v), want sender %d's next to be %d", id, seq, ok, id, next[min(id, senders-1)])
		}
		next[id]++
	}
	for range senders {
		if err := recvChan(t, res, 10*time.Second, "a sender's end"); err != nil {
			t.Fatal(err)
		}
	}
	cn.Close()
	for _, p := range ps {
		p.do(t, func(*actor.Context) {})
		noInternal(t, drainInbox(p)...)
	}
	if n := cn.SendWaiters(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}

// Short timeouts racing the poller's wake-ups, a slow peer: every SendWait
// either queued its record whole (nil) or none of it (ErrTimeout); the
// peer reads exactly the records that returned nil, in order; no internal
// message reaches the handler.
func TestSendWaitTimeoutsRaceWakeups(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	smallBuffers(t, cn, cli)
	if err := cn.SetWatermarks(4<<10, 8<<10); err != nil {
		t.Fatal(err)
	}
	readDone := make(chan error, 1)
	var read []int
	go func() {
		r := bufio.NewReaderSize(cli, 4096)
		cli.SetReadDeadline(time.Now().Add(60 * time.Second))
		for {
			_, seq, ok, err := readRecord(r)
			if err == io.EOF {
				readDone <- nil
				return
			}
			if err != nil || !ok {
				readDone <- fmt.Errorf("record %d (intact %v): %v", seq, ok, err)
				return
			}
			read = append(read, seq)
			if len(read)%8 == 0 {
				time.Sleep(time.Millisecond) // a slow peer, so that the queue fills
			}
		}
	}()
	var ok []int
	timeouts := 0
	p.do(t, func(c *actor.Context) {
		for seq := range 400 {
			err := cn.SendWait(c, record(0, seq, 2000+seq%7*1000), time.Millisecond)
			switch {
			case err == nil:
				ok = append(ok, seq)
			case errors.Is(err, actor.ErrTimeout):
				timeouts++
			default:
				t.Fatal(err)
			}
		}
		cn.Close()
	})
	if err := recvChan(t, readDone, 60*time.Second, "the peer's EOF"); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(read) != fmt.Sprint(ok) {
		t.Fatalf("the peer read records %v\nthe SendWaits that returned nil sent %v", read, ok)
	}
	if timeouts == 0 {
		t.Logf("no SendWait timed out (%d sent): the race was not exercised this time", len(ok))
	}
	p.do(t, func(*actor.Context) {})
	noInternal(t, drainInbox(p)...)
}
