//go:build linux

package netio_test

import (
	"bytes"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// TestStaleTagResolvesToNothing drives the generation check directly: a
// closed registration's (fd, gen) never resolves to the fd's next owner.
func TestStaleTagResolvesToNothing(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	srv, _ := net.Listen("tcp", "127.0.0.1:0")
	defer srv.Close()
	c1, err := netio.DialFor(sys, p.pid, srv.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fd1, gen1 := c1.Tag()
	c1.Close()
	// The kernel hands out the lowest free fd: usually the one just closed.
	var c2 *netio.Conn
	for i := 0; i < 20; i++ {
		c, err := netio.DialFor(sys, p.pid, srv.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if fd, _ := c.Tag(); fd == fd1 {
			c2 = c
			break
		}
	}
	if c2 == nil {
		t.Skip("kernel never reused the fd")
	}
	_, gen2 := c2.Tag()
	if gen2 == gen1 {
		t.Fatal("reused fd got the same generation")
	}
	if got := netio.Resolve(sys, fd1, gen1); got != nil {
		t.Fatalf("stale tag (%d,%d) resolved to %v", fd1, gen1, got)
	}
	if got := netio.Resolve(sys, fd1, gen2); got != c2 {
		t.Fatalf("live tag resolved to %v, want %v", got, c2)
	}
}

// TestFdReuseUnderLoad: actors open, use and close connections in a tight
// loop (so fd numbers are reused constantly) while each peer stamps its
// bytes with the connection's identity; every Data any actor receives must
// be for a Conn it owns and carry that connection's stamp.
func TestFdReuseUnderLoad(t *testing.T) {
	sys := startSys(t)
	// A plain net echo server that echoes one stamped line per connection.
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// The accept loop counts itself in swg, so every Add it makes happens
	// while the count is above zero, never racing the Wait below (an Add
	// from zero must happen before Wait).
	var swg sync.WaitGroup
	swg.Add(1)
	go func() {
		defer swg.Done()
		for {
			cn, err := srv.Accept()
			if err != nil {
				return
			}
			swg.Add(1)
			go func() {
				defer swg.Done()
				defer cn.Close()
				buf := make([]byte, 64)
				for {
					n, err := cn.Read(buf)
					if err != nil {
						return
					}
					cn.Write(buf[:n])
				}
			}()
		}
	}()
	actors, rounds := 16, 60
	if raceEnabled {
		rounds = 25
	}
	errs := make(chan error, actors)
	for a := 0; a < actors; a++ {
		pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
			mine := map[*netio.Conn][]byte{}
			fail := func(format string, args ...any) {
				errs <- fmt.Errorf("actor %d: "+format, append([]any{a}, args...)...)
			}
			for r := 0; r < rounds; r++ {
				cn, err := netio.Dial(c, srv.Addr().String(), 5*time.Second)
				if err != nil {
					fail("dial: %v", err)
					return
				}
				stamp := []byte(fmt.Sprintf("a%d-r%d;", a, r))
				mine[cn] = stamp
				cn.SetActive(netio.Once)
				cn.Send(stamp)
				var got []byte
				for len(got) < len(stamp) {
					m, err := c.Receive(nil, actor.Infinity)
					if err != nil {
						fail("receive: %v", err)
						return
					}
					d, ok := m.(netio.Data)
					if !ok {
						fail("unexpected %#v", m)
						return
					}
					want, ok := mine[d.Conn]
					if !ok || d.Conn.Owner() != c.Self() {
						fail("Data for a conn I do not own: %v", d.Conn)
						return
					}
					if d.Conn != cn {
						fail("Data for an old conn %v (stamp %q)", d.Conn, want)
						return
					}
					got = append(got, d.Bytes...)
					cn.SetActive(netio.Once)
				}
				if !bytes.Equal(got, stamp) {
					fail("got %q want %q", got, stamp)
					return
				}
				cn.Close()
				delete(mine, cn)
			}
			errs <- nil
			c.Stop(actor.Normal)
		}))
		sys.Send(pid, "go")
	}
	for a := 0; a < actors; a++ {
		if err := recvChan(t, errs, 60*time.Second, "actor result"); err != nil {
			t.Error(err)
		}
	}
	srv.Close()
	swg.Wait()
}
