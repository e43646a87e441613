package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind, a
// second line of defence beside the per-test checks.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type client struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	return &client{t, nc, bufio.NewReader(nc)}
}

// do sends one command and returns the reply line, or "" on an error.
func (c *client) do(cmd string) string {
	if _, err := fmt.Fprintf(c.nc, "%s\n", cmd); err != nil {
		c.t.Errorf("%s: %v", cmd, err)
		return ""
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Errorf("%s: %v", cmd, err)
	}
	return strings.TrimSuffix(line, "\n")
}

func (c *client) expect(cmd, want string) {
	if got := c.do(cmd); got != want {
		c.t.Errorf("%s: got %q, want %q", cmd, got, want)
	}
}

func openFDs(t *testing.T) int {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(des)
}

func TestKVStore(t *testing.T) {
	defer goleak.VerifyNone(t)
	fds := openFDs(t)

	s, err := start("127.0.0.1:0", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	long := dial(t, s.addr) // stays open across the crash and the shutdown
	long.expect("PUT keep me", "OK")
	long.expect("GET keep", "VALUE me")
	long.expect("FROB", "ERR bad command")

	// Concurrent clients, each on its own keys.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			c := dial(t, s.addr)
			defer c.nc.Close()
			for j := range 20 {
				k, v := fmt.Sprintf("k%d.%d", i, j), fmt.Sprint(i*j)
				c.expect("PUT "+k+" "+v, "OK")
				c.expect("GET "+k, "VALUE "+v)
				c.expect("DEL "+k, "OK")
				c.expect("GET "+k, "NOTFOUND")
			}
		})
	}
	wg.Wait()

	// Crash the store: the call in flight fails, the supervisor restarts it.
	old, _ := s.sys.Whereis(storeName)
	c := dial(t, s.addr)
	if got := c.do("CRASH"); got != "ERR store unavailable" {
		t.Errorf("CRASH: got %q", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for long.do("GET keep") == "ERR store unavailable" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if now, _ := s.sys.Whereis(storeName); now == old || now.IsZero() {
		t.Errorf("store not restarted: %v, was %v", now, old)
	}
	long.expect("GET keep", "NOTFOUND") // a restarted store starts empty
	c.expect("PUT k v", "OK")
	long.expect("GET k", "VALUE v")
	c.nc.Close()

	// Shutdown closes the connection left open.
	if err := s.stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := long.r.ReadString('\n'); err != io.EOF {
		t.Errorf("after shutdown: %v, want EOF", err)
	}
	long.nc.Close()
	if n := openFDs(t); n != fds {
		t.Errorf("%d fds open after shutdown, %d before", n, fds)
	}
}
