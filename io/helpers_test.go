//go:build linux

package netio_test

import (
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	netio "github.com/colonyrt/colony/io"
)

func TestMain(m *testing.M) {
	// The runtime opens its own poller's descriptors (an epoll and an
	// eventfd) for the process's first timer or network fd, and never
	// closes them. go test's -timeout alarm is usually that first timer;
	// with -timeout 0 a test's would be, and startSys's fd-leak check
	// would count the two as leaked. Start the runtime's poller first.
	time.AfterFunc(time.Hour, func() {}).Stop()
	goleak.VerifyTestMain(m)
}

// needFDs makes room for n more descriptors in this process: Go raises
// the soft RLIMIT_NOFILE to the hard one at start; past that only a
// privileged process (CI runs as root) may raise the hard limit. A test
// that cannot get them fails, saying why, rather than failing in Dial.
func needFDs(t testing.TB, n int) {
	t.Helper()
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	want := uint64(fdCount(t) + n + 64)
	if r.Cur >= want {
		return
	}
	nr := syscall.Rlimit{Cur: want, Max: max(r.Max, want)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nr); err != nil {
		t.Fatalf("need %d file descriptors, RLIMIT_NOFILE is %d (hard %d) and could not be raised: %v", want, r.Cur, r.Max, err)
	}
}

// openFDs maps each of this process's open descriptors to what it is
// (a socket, a pipe, a file), for a leak report.
func openFDs() map[string]string {
	ents, _ := os.ReadDir("/proc/self/fd")
	m := make(map[string]string, len(ents))
	for _, e := range ents {
		m[e.Name()], _ = os.Readlink("/proc/self/fd/" + e.Name())
	}
	return m
}

func fdCount(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// startSys starts a System, and at cleanup shuts it down, waits for the
// poller to exit and checks that no fd leaked.
func startSys(t testing.TB) *actor.System {
	t.Helper()
	return startSysCfg(t, actor.Config{})
}

// startSysCfg is startSys with cfg.
func startSysCfg(t testing.TB, cfg actor.Config) *actor.System {
	t.Helper()
	before := fdCount(t)
	fdsBefore := openFDs()
	var sys *actor.System
	t.Cleanup(func() { // runs after testsys's Shutdown (cleanups run last-in first-out)
		eventually(t, 5*time.Second, "poller exits after shutdown", func() bool { return !netio.PollerRunning(sys) })
		deadline := time.Now().Add(10 * time.Second)
		for fdCount(t) > before {
			if time.Now().After(deadline) {
				var extra []string
				for fd, what := range openFDs() {
					if fdsBefore[fd] != what {
						extra = append(extra, fmt.Sprintf("%s: %s", fd, what))
					}
				}
				t.Fatalf("fd count %d after shutdown, %d before; new or changed: %v", fdCount(t), before, extra)
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	sys = testsys.Start(t, cfg)
	return sys
}

// eventually polls cond with a deadline (never sleep-and-hope).
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// The kernel's view of a loopback connection, for tests that must wait
// until bytes or a FIN have got somewhere (never a sleep that assumes a
// speed).

// sockIoctl is SIOCINQ (bytes received, not yet read) or SIOCOUTQ (bytes
// written, not yet acknowledged by the peer) of the client side c.
func sockIoctl(t testing.TB, c net.Conn, req uint) int {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n, ierr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), req) }); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatal(ierr)
	}
	return n
}

// awaitDelivered waits until everything c has written (and its FIN, after
// CloseWrite) has reached the peer's kernel: its receive queue, or the
// reader.
func awaitDelivered(t testing.TB, c net.Conn) {
	t.Helper()
	eventually(t, 10*time.Second, "the client's bytes in the server's kernel", func() bool { return sockIoctl(t, c, unix.SIOCOUTQ) == 0 })
}

// awaitReceived waits until c has n bytes received and unread.
func awaitReceived(t testing.TB, c net.Conn, n int) {
	t.Helper()
	eventually(t, 10*time.Second, fmt.Sprintf("%d bytes received by the client", n), func() bool { return sockIoctl(t, c, unix.SIOCINQ) >= n })
}

// serverSide is the server's end of the client connection c, as
// /proc/net/tcp lists it: its state (1 established, 8 close wait; ok false
// once the socket is gone) and its receive queue.
func serverSide(t testing.TB, c net.Conn) (state, rxQueue int, ok bool) {
	t.Helper()
	return tcpEntry(t, c.RemoteAddr().(*net.TCPAddr).Port, c.LocalAddr().(*net.TCPAddr).Port)
}

// tcpEntry finds the IPv4 socket from local port lport to remote port
// rport in /proc/net/tcp (lport 0: any, the first found; state 0: any).
func tcpEntry(t testing.TB, lport, rport int) (state, rxQueue int, ok bool) {
	t.Helper()
	return tcpFind(t, lport, rport, 0)
}

// tcpFind is tcpEntry for a socket in the given state (0: any).
func tcpFind(t testing.TB, lport, rport, want int) (state, rxQueue int, ok bool) {
	t.Helper()
	tab, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("no /proc/net/tcp: %v", err)
	}
	for _, line := range strings.Split(string(tab), "\n")[1:] {
		f := strings.Fields(line) // sl local rem st tx_queue:rx_queue ...
		if len(f) < 5 || lport != 0 && !strings.HasSuffix(f[1], fmt.Sprintf(":%04X", lport)) ||
			!strings.HasSuffix(f[2], fmt.Sprintf(":%04X", rport)) {
			continue
		}
		var tx int
		if _, err := fmt.Sscanf(f[3], "%x", &state); err != nil {
			t.Fatalf("/proc/net/tcp: %q: %v", line, err)
		}
		if want != 0 && state != want {
			continue
		}
		if _, err := fmt.Sscanf(f[4], "%x:%x", &tx, &rxQueue); err != nil {
			t.Fatalf("/proc/net/tcp: %q: %v", line, err)
		}
		return state, rxQueue, true
	}
	return 0, 0, false
}

// recvChan returns a value from ch or fails after d.
func recvChan[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// listenerActor listens on 127.0.0.1:0 in Init, in active mode, and gives
// each accepted connection to a linked echo actor.
type listenerActor struct {
	t      testing.TB
	addrCh chan string
	l      *netio.Listener
}

func (a *listenerActor) Init(c *actor.Context) {
	l, err := netio.Listen(c.System(), c.Self(), "127.0.0.1:0")
	if err != nil {
		a.t.Errorf("listen: %v", err)
		a.addrCh <- ""
		return
	}
	a.l = l
	l.SetActive(netio.On)
	a.addrCh <- l.Addr().String()
}

func (a *listenerActor) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Accepted:
		child, err := c.SpawnLink(&echoConn{})
		if err != nil {
			a.t.Errorf("spawn: %v", err)
			m.Conn.Close()
			return
		}
		if err := m.Conn.ControllingProcess(c, child); err != nil {
			a.t.Errorf("transfer: %v", err)
			return
		}
		m.Conn.SetActive(netio.Once)
	case netio.Error:
		a.t.Errorf("listener error: %v", m.Err)
	}
}

// echoServer spawns a listenerActor and returns its address.
func echoServer(t testing.TB, sys *actor.System) string {
	t.Helper()
	a := &listenerActor{t: t, addrCh: make(chan string, 1)}
	if _, err := sys.Spawn(a); err != nil {
		t.Fatal(err)
	}
	addr := recvChan(t, a.addrCh, 5*time.Second, "listener address")
	if addr == "" {
		t.FailNow()
	}
	return addr
}

// echoConn echoes everything in active-once mode; when the peer closes it
// closes once its output is drained.
type echoConn struct{ peerClosed bool }

func (e *echoConn) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Data:
		if err := m.Conn.Send(m.Bytes); err != nil {
			c.Stop(err.Error())
			return
		}
		m.Conn.SetActive(netio.Once)
	case netio.Closed:
		e.peerClosed = true
		if m.Conn.Pending() == 0 {
			m.Conn.Close()
			c.Stop(actor.Normal)
		}
	case netio.Drained:
		if e.peerClosed {
			m.Conn.Close()
			c.Stop(actor.Normal)
		}
	case netio.Error:
	}
}
