// The echo scenario: a Colony TCP echo server (one listener actor, one actor
// per connection, active-once sockets) and Colony client actors on loopback.

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

type echoListener struct{ addr chan string }

func (e *echoListener) Init(c *actor.Context) {
	l, err := netio.Listen(c.System(), c.Self(), "127.0.0.1:0")
	if err != nil {
		e.addr <- ""
		c.Stop(err.Error())
		return
	}
	l.SetActive(netio.On)
	e.addr <- l.Addr().String()
}

func (e *echoListener) Receive(c *actor.Context, msg any) {
	if m, ok := msg.(netio.Accepted); ok {
		child, err := c.SpawnLink(actor.ActorFunc(echoHandler))
		if err != nil || m.Conn.ControllingProcess(c, child) != nil {
			m.Conn.Close()
			return
		}
		m.Conn.SetActive(netio.Once)
	}
}

func echoHandler(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Data:
		m.Conn.Send(m.Bytes)
		m.Conn.SetActive(netio.Once)
	case netio.Closed:
		m.Conn.Close()
		c.Stop(actor.Normal)
	}
}

// echoScenario runs the echo server with 100 client actors, each doing
// round trips of a 4 KiB message for about a second, and prints throughput.
func echoScenario(w io.Writer) error {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
		netio.Stop(sys)
	}()
	la := &echoListener{addr: make(chan string, 1)}
	if _, err := sys.Spawn(la); err != nil {
		return err
	}
	addr := <-la.addr
	if addr == "" {
		return fmt.Errorf("echo: listen failed")
	}
	const clients, size = 100, 4 << 10
	stop := time.Now().Add(time.Second)
	type result struct {
		trips int
		err   error
	}
	res := make(chan result, clients)
	start := time.Now()
	for i := 0; i < clients; i++ {
		pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
			cn, err := netio.Dial(c, addr, 2*time.Second)
			if err != nil {
				res <- result{err: err}
				return
			}
			defer cn.Close()
			msg := bytes.Repeat([]byte{byte(i)}, size)
			trips := 0
			for time.Now().Before(stop) {
				if err := cn.Send(msg); err != nil {
					res <- result{err: err}
					return
				}
				got, err := cn.Recv(c, size, 2*time.Second)
				if err != nil || !bytes.Equal(got, msg) {
					res <- result{err: fmt.Errorf("echo: round trip %d: %v", trips, err)}
					return
				}
				trips++
			}
			res <- result{trips: trips}
			c.Stop(actor.Normal)
		}))
		if err != nil {
			return err
		}
		sys.Send(pid, "go")
	}
	total := 0
	for i := 0; i < clients; i++ {
		r := <-res
		if r.err != nil {
			return r.err
		}
		total += r.trips
	}
	el := time.Since(start)
	fmt.Fprintf(w, "echo: %d connections, %d round trips of %d B in %v: %.0f round trips/s, %.1f MiB/s each way\n",
		clients, total, size, el.Round(time.Millisecond), float64(total)/el.Seconds(),
		float64(total)*size/el.Seconds()/(1<<20))
	return nil
}
