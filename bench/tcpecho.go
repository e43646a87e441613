//go:build colony

// TCP echo: Colony's netio server (one actor per connection, active-once)
// against a goroutine-per-connection net server, same client load.
//
// Design note. Not a Workload of the suite's table (its Params and Check do
// not fit a connection count and a memory figure); it is a standalone
// function, runTCPEcho, with a -tcpecho flag-free entry: call
// runTCPEchoReport(os.Stdout) (bench_test.go's TestTCPEcho can, or main).
// The clients are the same plain net goroutines for both servers, so the
// resident-memory figure is the whole process's (VmRSS) after all
// connections are up, minus the baseline before the server started; client
// memory is the same on both sides, so the difference is the servers'.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

type tcpEchoResult struct {
	Impl     string
	Conns    int
	Trips    int
	Wall     time.Duration
	RSSDelta int64 // bytes
}

func raiseNofile() {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) == nil && r.Cur < r.Max {
		r.Cur = r.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
	}
}

func vmRSS() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	return 0
}

// startGoEcho starts a goroutine-per-connection echo server.
func startGoEcho() (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func() { ln.Close() }
}

type colEchoListener struct{ addr chan string }

func (e *colEchoListener) Init(c *actor.Context) {
	l, err := netio.Listen(c.System(), c.Self(), "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	l.SetActive(netio.N(1 << 30))
	e.addr <- l.Addr().String()
}

func (e *colEchoListener) Receive(c *actor.Context, msg any) {
	if m, ok := msg.(netio.Accepted); ok {
		child, err := c.SpawnLink(actor.ActorFunc(func(c *actor.Context, msg any) {
			switch m := msg.(type) {
			case netio.Data:
				m.Conn.Send(m.Bytes)
				m.Conn.SetActive(netio.Once)
			case netio.Closed:
				m.Conn.Close()
				c.Stop(actor.Normal)
			}
		}))
		if err != nil || m.Conn.ControllingProcess(c, child) != nil {
			m.Conn.Close()
			return
		}
		m.Conn.SetActive(netio.Once)
	}
}

func startColonyEcho() (string, func()) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		panic(err)
	}
	la := &colEchoListener{addr: make(chan string, 1)}
	sys.Spawn(la)
	return <-la.addr, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
		netio.Stop(sys)
	}
}

// runTCPEcho connects conns clients, then each does 64-byte round trips for d.
func runTCPEcho(impl string, conns int, d time.Duration) (tcpEchoResult, error) {
	raiseNofile()
	base := vmRSS()
	var addr string
	var stop func()
	if impl == "colony" {
		addr, stop = startColonyEcho()
	} else {
		addr, stop = startGoEcho()
	}
	defer stop()
	cs := make([]net.Conn, conns)
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return tcpEchoResult{}, fmt.Errorf("dial %d: %w", i, err)
		}
		defer c.Close()
		cs[i] = c
	}
	msg := bytes.Repeat([]byte("x"), 64)
	// One round trip each so every server-side connection is live and warm.
	for _, c := range cs {
		c.Write(msg)
		io.ReadFull(c, make([]byte, 64))
	}
	rss := vmRSS() - base
	var wg sync.WaitGroup
	var mu sync.Mutex
	trips := 0
	start := time.Now()
	end := start.Add(d)
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64)
			n := 0
			for time.Now().Before(end) {
				if _, err := c.Write(msg); err != nil {
					break
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					break
				}
				n++
			}
			mu.Lock()
			trips += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return tcpEchoResult{impl, conns, trips, time.Since(start), rss}, nil
}

// runTCPEchoReport runs both servers at 1k and 10k connections and prints figures.
func runTCPEchoReport(w io.Writer, d time.Duration, sizes ...int) error {
	for _, n := range sizes {
		for _, impl := range []string{"goroutines", "colony"} {
			r, err := runTCPEcho(impl, n, d)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "tcpecho %-10s conns=%-6d trips/s=%-9.0f rss_delta=%.1f MiB\n",
				r.Impl, r.Conns, float64(r.Trips)/r.Wall.Seconds(), float64(r.RSSDelta)/(1<<20))
		}
	}
	return nil
}
