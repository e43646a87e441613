//go:build linux

package netio_test

// Fault tests, run on every backend of the platform (netio.Backends):
// descriptors closed and reused while their events are in flight, owners
// killed while they read and while they write, and thousands of
// connections opened and dropped abruptly. Each ends with no fd leaked
// (startSys counts /proc/self/fd), no goroutine left (goleak, after the
// System's Shutdown) and no message about a socket delivered to an actor
// that does not own it.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// onBackends runs f once per backend, on a System using it: every
// backend of the platform, or only netio.BackendEnv's when it is set (as
// .ci/run sets it, once per backend). The goroutine check runs after the
// System's Shutdown and fd check.
func onBackends(t *testing.T, f func(t *testing.T, sys *actor.System)) {
	backends := netio.Backends()
	if b := os.Getenv(netio.BackendEnv); b != "" {
		backends = []netio.Backend{netio.Backend(b)}
	}
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // last: after Shutdown's cleanup
			sys := startSys(t)
			if err := netio.SetBackend(sys, b); err != nil {
				t.Fatal(err)
			}
			f(t, sys)
			if got := netio.BackendOf(sys); got != b && !(b == netio.Uring && got == netio.Epoll) {
				t.Fatalf("the System ran on %s, want %s", got, b)
			}
		})
	}
}

// stampServer is a plain net server that writes, on each connection, the
// line the client sent first, again and again until the connection ends:
// a flood in which every byte names the connection it belongs to.
func stampServer(t *testing.T) (addr string) {
	t.Helper()
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { srv.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(30 * time.Second))
				buf := make([]byte, 64)
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				stamp := bytes.Repeat(buf[:n], 256)
				for {
					if _, err := c.Write(stamp); err != nil {
						return
					}
				}
			}()
		}
	}()
	return srv.Addr().String()
}

// Descriptors closed while their input is in flight, and reused at once:
// actors dial a server that floods each connection with its own stamp,
// take part of the flood in active mode, close the Conn with input still
// arriving (events for it in flight in the poller) and dial again, which
// hands out the fd (or slot) just closed. Every Data an actor gets is for
// a Conn it dialled and carries that Conn's stamp only (Data sent before a
// Close may still be in the mailbox after it: the stamp says whose).
func TestFaultFdReuseWhileEventsInFlight(t *testing.T) {
	onBackends(t, func(t *testing.T, sys *actor.System) {
		addr := stampServer(t)
		actors, rounds := 8, 40
		if raceEnabled {
			rounds = 15
		}
		errs := make(chan error, actors)
		var tags sync.Map // fd (slot) -> a Conn's generation that had it
		var reused atomic.Int64
		for a := range actors {
			pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
				errs <- reuseRounds(c, addr, a, rounds, &tags, &reused)
				c.Stop(actor.Normal)
			}))
			if err != nil {
				t.Fatal(err)
			}
			sys.Send(pid, "go")
		}
		for range actors {
			if err := recvChan(t, errs, 60*time.Second, "an actor's rounds"); err != nil {
				t.Error(err)
			}
		}
		if reused.Load() == 0 {
			t.Error("no fd (slot) was reused: the test did not test reuse")
		}
		t.Logf("%d dials got an fd (slot) a closed Conn had had", reused.Load())
	})
}

// reuseRounds is one actor of TestFaultFdReuseWhileEventsInFlight.
func reuseRounds(c *actor.Context, addr string, a, rounds int, tags *sync.Map, reused *atomic.Int64) error {
	stamps := map[*netio.Conn]string{} // every Conn this actor dialled
	for r := range rounds {
		cn, err := netio.Dial(c, addr, 5*time.Second)
		if err != nil {
			return fmt.Errorf("actor %d round %d: dial: %v", a, r, err)
		}
		stamp := fmt.Sprintf("<a%d r%d>", a, r)
		stamps[cn] = stamp
		fd, gen := cn.Tag()
		if old, ok := tags.Swap(fd, gen); ok && old.(uint32) != gen {
			reused.Add(1)
		}
		if err := cn.Send([]byte(stamp)); err != nil {
			return fmt.Errorf("actor %d round %d: send: %v", a, r, err)
		}
		k := 1 + r%3 // a few chunks, then close mid-flood
		if err := cn.SetActive(netio.N(k)); err != nil {
			return err
		}
		for got := 0; got < k; {
			m, err := c.Receive(nil, 10*time.Second)
			if err != nil {
				return fmt.Errorf("actor %d round %d: receive: %v", a, r, err)
			}
			if p, ok := m.(netio.Passive); ok && stamps[p.Conn] != "" {
				continue // cn's, or an earlier Conn's from before its Close
			}
			d, ok := m.(netio.Data)
			if !ok {
				return fmt.Errorf("actor %d round %d: unexpected %#v", a, r, m)
			}
			s, mine := stamps[d.Conn]
			switch {
			case !mine:
				return fmt.Errorf("actor %d round %d: Data for a Conn it never dialled: %v", a, r, d.Conn)
			case !stampOnly(d.Bytes, s):
				return fmt.Errorf("actor %d round %d: Data on %s carries another connection's bytes: %.40q", a, r, s, d.Bytes)
			}
			if d.Conn == cn {
				got++
			}
		}
		cn.Close() // input still arriving, events in flight
	}
	// What was delivered before the last Close: still only this actor's,
	// with the right stamps.
	for {
		m, err := c.Receive(nil, 20*time.Millisecond)
		if err != nil {
			return nil
		}
		if p, ok := m.(netio.Passive); ok && stamps[p.Conn] != "" {
			continue
		}
		d, ok := m.(netio.Data)
		if s, mine := stamps[d.Conn]; !ok || !mine || !stampOnly(d.Bytes, s) {
			return fmt.Errorf("actor %d: after its last Close, %#v", a, m)
		}
	}
}

// stampOnly says b is a run of stamp repeated (starting anywhere in it).
func stampOnly(b []byte, stamp string) bool {
	return bytes.Contains(bytes.Repeat([]byte(stamp), len(b)/len(stamp)+2), b)
}

// An owner killed while it reads: blocked in Recv, or in active mode with
// a flood arriving. Its death closes the Conn (the peer reads EOF, or a
// reset for input left unread), the blocked Recv leaves nothing behind,
// and no message reaches any other actor.
func TestFaultOwnerKilledMidRead(t *testing.T) {
	onBackends(t, func(t *testing.T, sys *actor.System) {
		for _, mode := range []string{"recv", "active"} {
			bystander := newProbe(t, sys)
			owner := newProbe(t, sys)
			cn, cli := listenAccept(t, owner)
			inRecv := make(chan struct{})
			switch mode {
			case "recv":
				sys.Send(owner.pid, doFn{func(c *actor.Context) {
					close(inRecv)
					cn.Recv(c, 1<<20, actor.Infinity) // never satisfied: the peer sends a little
				}, make(chan struct{})})
				<-inRecv
				cli.Write([]byte("part of what Recv waits for"))
				eventually(t, 5*time.Second, "the owner blocked in Recv", func() bool { return actorState(sys, owner.pid) == "parked" })
			case "active":
				if err := cn.SetActive(netio.On); err != nil {
					t.Fatal(err)
				}
				go func() {
					chunk := bytes.Repeat([]byte("flood "), 1000)
					for {
						if _, err := cli.Write(chunk); err != nil {
							return
						}
					}
				}()
				recvChan(t, owner.inbox, 5*time.Second, "the flood's first Data")
			}
			w, err := sys.Monitor(owner.pid)
			if err != nil {
				t.Fatal(err)
			}
			sys.Exit(owner.pid, actor.Kill)
			recvChan(t, w.Done(), 5*time.Second, "the owner's death")
			cli.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.Copy(io.Discard, cli); err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
				t.Fatalf("%s: the peer's read after the owner's death: %v, want EOF or a reset", mode, err)
			}
			cli.Close()
			if err := cn.Send([]byte("x")); !errors.Is(err, netio.ErrClosed) {
				t.Fatalf("%s: Send on the dead owner's Conn: %v, want ErrClosed", mode, err)
			}
			bystander.do(t, func(*actor.Context) {})
			if len(bystander.inbox) > 0 {
				t.Fatalf("%s: a bystander got %#v", mode, <-bystander.inbox)
			}
		}
	})
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// An owner killed while it writes: blocked in SendWait on a peer that does
// not read, with output queued. Its death closes the Conn as Close does:
// the queued output lingers and is written out once the peer reads, every
// byte in order and then EOF; the SendWait's bytes, which it had not
// queued, are not among them.
func TestFaultOwnerKilledMidWrite(t *testing.T) {
	onBackends(t, func(t *testing.T, sys *actor.System) {
		owner := newProbe(t, sys)
		cn, cli := listenAccept(t, owner)
		smallBuffers(t, cn, cli)
		var queued atomic.Int64
		sys.Send(owner.pid, doFn{func(c *actor.Context) {
			n, err := fillBusy(c, cn)
			if err != nil {
				return
			}
			queued.Store(int64(n))
			cn.SendWait(c, streamAt(n, swChunk), actor.Infinity)
		}, make(chan struct{})})
		eventually(t, 20*time.Second, "the owner blocked in SendWait", func() bool {
			return cn.SendWaiters() == 1 && actorState(sys, owner.pid) == "parked"
		})
		w, err := sys.Monitor(owner.pid)
		if err != nil {
			t.Fatal(err)
		}
		sys.Exit(owner.pid, actor.Kill)
		recvChan(t, w.Done(), 5*time.Second, "the owner's death")
		cli.SetReadDeadline(time.Now().Add(20 * time.Second))
		got, err := io.ReadAll(cli)
		if err != nil {
			t.Fatalf("the peer's read after the owner's death: %v after %d bytes", err, len(got))
		}
		n := int(queued.Load())
		if len(got) != n || !bytes.Equal(got, streamAt(0, n)) {
			t.Fatalf("the peer read %d bytes, want the %d queued before the kill, in order", len(got), n)
		}
		cli.Close()
	})
}

// dropActor owns one accepted connection, echoes in active-once mode, and
// reports any socket message about a Conn that is not its own.
type dropActor struct {
	cn    *netio.Conn
	wrong chan<- error
	done  *sync.WaitGroup
}

func (d *dropActor) Receive(c *actor.Context, msg any) {
	var about *netio.Conn
	switch m := msg.(type) {
	case *netio.Conn:
		d.cn = m
		m.SetActive(netio.Once)
		return
	case netio.Data:
		about = m.Conn
		if about == d.cn {
			m.Conn.Send(m.Bytes)
			m.Conn.SetActive(netio.Once)
		}
	case netio.Closed:
		about = m.Conn
		if about == d.cn {
			m.Conn.Close()
			d.done.Done()
			c.Stop(actor.Normal)
		}
	case netio.Error:
		about = m.Conn
	case netio.Drained:
		about = m.Conn
	}
	if about != nil && about != d.cn {
		d.wrong <- fmt.Errorf("actor owning %v got a message about %v: %#v", d.cn, about, msg)
	}
}

// Thousands of connections opened, each with an actor echoing on it, then
// dropped abruptly at once (the clients reset them): every actor sees its
// own Conn end and nothing about another's, and all their descriptors and
// goroutines are gone afterwards. 10,000 connections; 500 under -race. The
// clients are another process (this test binary, as
// TestFaultDropClientProcess), so the server's process holds one fd per
// connection, not two.
func TestFaultManyConnectionsDroppedAbruptly(t *testing.T) {
	n := 10000
	if raceEnabled {
		n = 500
	}
	onBackends(t, func(t *testing.T, sys *actor.System) {
		needFDs(t, n+256)
		wrong := make(chan error, 16)
		var ended sync.WaitGroup
		ended.Add(n)
		accepted := make(chan struct{}, n)
		lp, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			switch m := msg.(type) {
			case doFn:
				m.f(c)
				close(m.done)
			case netio.Accepted:
				pid, err := c.Spawn(&dropActor{wrong: wrong, done: &ended})
				if err == nil {
					err = m.Conn.ControllingProcess(c, pid)
				}
				if err != nil {
					wrong <- err
					return
				}
				c.Send(pid, m.Conn)
				accepted <- struct{}{}
			case netio.Error:
				wrong <- m.Err
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		addrCh := make(chan string, 1)
		sys.Send(lp, doFn{func(c *actor.Context) {
			l, err := netio.Listen(c.System(), c.Self(), "127.0.0.1:0")
			if err != nil {
				t.Error(err)
				addrCh <- ""
				return
			}
			l.SetActive(netio.On)
			addrCh <- l.Addr().String()
		}, make(chan struct{})})
		addr := recvChan(t, addrCh, 5*time.Second, "the listener")
		if addr == "" {
			t.FailNow()
		}
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFaultDropClientProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), dropClientEnv+"="+addr, fmt.Sprintf("%s_N=%d", dropClientEnv, n))
		cmd.Stderr = os.Stderr
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		defer stdin.Close()
		lines := bufio.NewScanner(stdout)
		expect := func(want string) {
			t.Helper()
			for lines.Scan() {
				if lines.Text() == want {
					return
				}
			}
			t.Fatalf("the client process ended before saying %s: %v", want, lines.Err())
		}
		expect("READY") // every connection dialled and echoed once
		for i := range n {
			select {
			case <-accepted:
			case err := <-wrong:
				t.Fatal(err)
			case <-ctx.Done():
				t.Fatalf("%d of %d connections accepted in time", i, n)
			}
		}
		fmt.Fprintln(stdin, "DROP")
		expect("DROPPED")
		done := make(chan struct{})
		go func() { ended.Wait(); close(done) }()
		select {
		case <-done:
		case err := <-wrong:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatal("not every connection's actor saw its Conn end")
		}
		select {
		case err := <-wrong:
			t.Fatal(err)
		default:
		}
	})
}

const dropClientEnv = "COLONY_FAULT_DROP_CLIENT"

// TestFaultDropClientProcess is the client process of
// TestFaultManyConnectionsDroppedAbruptly (it skips unless started by it):
// it dials N connections, echoes a line on each, says READY, and on DROP
// resets them all at once and says DROPPED.
func TestFaultDropClientProcess(t *testing.T) {
	addr := os.Getenv(dropClientEnv)
	if addr == "" {
		t.Skip("the client process of TestFaultManyConnectionsDroppedAbruptly")
	}
	var n int
	fmt.Sscan(os.Getenv(dropClientEnv+"_N"), &n)
	needFDs(t, n+64)
	deadline := time.Now().Add(60 * time.Second)
	clients := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, time.Until(deadline))
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		clients = append(clients, c)
	}
	for i, c := range clients {
		fmt.Fprintf(c, "%d;", i)
	}
	buf := make([]byte, 16)
	for i, c := range clients {
		want := fmt.Sprintf("%d;", i)
		c.SetReadDeadline(deadline)
		if _, err := io.ReadFull(c, buf[:len(want)]); err != nil || string(buf[:len(want)]) != want {
			t.Fatalf("echo on connection %d: %q, %v", i, buf[:len(want)], err)
		}
	}
	fmt.Println("READY")
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() || in.Text() != "DROP" {
		t.Fatal("no DROP from the server's test")
	}
	for _, c := range clients {
		c.(*net.TCPConn).SetLinger(0) // a reset
		c.Close()
	}
	clients = nil
	fmt.Println("DROPPED")
}

// A closed Listener is closed when Close returns, on every backend (on
// io_uring the fd is closed once its poll is cancelled, and Close waits
// for that): a Listen on the same port at once finds it free, as a
// supervisor restarting a listener needs.
func TestCloseFreesThePortAtOnce(t *testing.T) {
	onBackends(t, func(t *testing.T, sys *actor.System) {
		p := newProbe(t, sys)
		p.do(t, func(c *actor.Context) {
			l, err := netio.Listen(c.System(), c.Self(), "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			for i := range 20 {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if l, err = netio.Listen(c.System(), c.Self(), addr); err != nil {
					t.Fatalf("Listen on %s right after its Listener's Close (%d): %v", addr, i, err)
				}
			}
			l.Close()
		})
	})
}
