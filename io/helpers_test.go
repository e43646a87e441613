package netio_test

import (
	"os"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	netio "github.com/colonyrt/colony/io"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
	var sys *actor.System
	t.Cleanup(func() { // runs after testsys's Shutdown (cleanups run last-in first-out)
		eventually(t, 5*time.Second, "poller exits after shutdown", func() bool { return !netio.PollerRunning(sys) })
		eventually(t, 5*time.Second, "fd count returns to its start", func() bool { return fdCount(t) <= before })
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
