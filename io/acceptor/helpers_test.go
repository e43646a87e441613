package acceptor_test

import (
	"bufio"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testlog"
	"github.com/colonyrt/colony/internal/testsys"
	netio "github.com/colonyrt/colony/io"
	"github.com/colonyrt/colony/io/acceptor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startSys starts a System whose reports go to the returned sink; at
// cleanup it is shut down and no fd may be left.
func startSys(t testing.TB) (*actor.System, *testlog.Sink) {
	t.Helper()
	before := fdCount(t)
	t.Cleanup(func() { // after testsys's Shutdown: cleanups run last-in first-out
		eventually(t, 5*time.Second, "fds back to their start", func() bool { return fdCount(t) <= before })
	})
	logs := &testlog.Sink{}
	return testsys.Start(t, actor.Config{Logger: logs.Log}), logs
}

func fdCount(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// eventually polls cond with a deadline.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// recv returns a value from ch, or fails after 10 s.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}

// lineHandler answers each line: "panic" panics, "quit" stops, "who"
// answers the actor's pid, anything else is echoed. It reports its Init
// (its pid) and its Terminate on the channels, if set.
type lineHandler struct {
	actor.ServerBase
	cn      *netio.Conn
	buf     []byte
	inits   chan<- actor.Pid
	ends    chan<- actor.Reason
	trap    bool
	initErr error
	noArm   bool // leave arming to the Active option
	greet   bool // send "hello" from Init
}

func (h *lineHandler) Init(c *actor.Context, cn *netio.Conn) error {
	if h.initErr != nil {
		return h.initErr
	}
	h.cn = cn
	if h.trap {
		c.TrapExit(true)
	}
	if h.inits != nil {
		h.inits <- c.Self()
	}
	if h.greet {
		cn.Send([]byte("hello\n"))
	}
	if h.noArm {
		return nil
	}
	return cn.SetActive(netio.Once)
}

func (h *lineHandler) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Data:
		h.buf = append(h.buf, m.Bytes...)
		for {
			i := strings.IndexByte(string(h.buf), '\n')
			if i < 0 {
				break
			}
			line := string(h.buf[:i])
			h.buf = h.buf[i+1:]
			switch line {
			case "panic":
				panic("asked to")
			case "quit":
				h.cn.Send([]byte("bye\n"))
				c.Stop(actor.Normal)
				return
			case "who":
				h.cn.Send([]byte(c.Self().String() + "\n"))
			default:
				h.cn.Send([]byte(line + "\n"))
			}
		}
		h.cn.SetActive(netio.Once)
	case netio.Closed:
		c.Stop(actor.Normal)
	}
}

func (h *lineHandler) Terminate(c *actor.Context, reason actor.Reason) {
	if actor.IsShutdown(reason) && h.cn != nil {
		h.cn.Send([]byte("shutting down\n"))
	}
	if h.ends != nil {
		h.ends <- reason
	}
}

// client is a plain Go TCP client of a line protocol.
type client struct {
	t  testing.TB
	nc net.Conn
	r  *bufio.Reader
}

func dial(t testing.TB, l *acceptor.Listener) *client {
	t.Helper()
	return dialAddr(t, l.Addr().String())
}

func dialAddr(t testing.TB, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &client{t, nc, bufio.NewReader(nc)}
}

// do sends a line and returns the answer line, or the read's error text.
func (c *client) do(line string) string {
	c.t.Helper()
	if _, err := c.nc.Write([]byte(line + "\n")); err != nil {
		return "write: " + err.Error()
	}
	return c.read()
}

func (c *client) read() string {
	s, err := c.r.ReadString('\n')
	if err != nil {
		return "read: " + err.Error()
	}
	return strings.TrimSuffix(s, "\n")
}

func (c *client) close() { c.nc.Close() }
