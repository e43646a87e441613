//go:build !nocolony

// The Colony side of the TCP echo workloads (tcpecho.go): one actor per connection, owning its
// socket, in active-once mode, as a gen_tcp echo server is written in Erlang. colony runs it on
// netio's default backend (epoll on Linux), colony-uring and colony-portable on the others
// (netio.SetBackend); a Uring that falls back to epoll says so in the sample's note.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// colEchoListener owns the listening socket (active: Accepted messages) and spawns one echo
// actor per accepted connection, handing it the socket.
type colEchoListener struct {
	addr chan string
	err  chan error
}

func (e *colEchoListener) Init(c *actor.Context) {
	l, err := netio.Listen(c.System(), c.Self(), "127.0.0.1:0")
	if err != nil {
		e.err <- err
		c.Stop(actor.Normal)
		return
	}
	l.SetActive(netio.N(1 << 30))
	e.addr <- l.Addr().String()
}

func (e *colEchoListener) Receive(c *actor.Context, msg any) {
	m, ok := msg.(netio.Accepted)
	if !ok {
		return
	}
	child, err := c.Spawn(actor.ActorFunc(colEchoConn))
	if err != nil || m.Conn.ControllingProcess(c, child) != nil {
		m.Conn.Close()
		return
	}
	m.Conn.SetActive(netio.Once)
}

// colEchoConn echoes each chunk and re-arms; it stops when the peer closes.
func colEchoConn(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Data:
		m.Conn.Send(m.Bytes)
		m.Conn.SetActive(netio.Once)
	case netio.Closed:
		m.Conn.Close()
		c.Stop(actor.Normal)
	}
}

func startColonyEcho() (string, func(), error) { return startColonyEchoOn("")() }

// startColonyEchoOn is startColonyEcho on backend b ("" for the default).
func startColonyEchoOn(b netio.Backend) tcpEchoServer {
	return func() (string, func(), error) { return startColonyEchoBackend(b) }
}

func startColonyEchoBackend(b netio.Backend) (string, func(), error) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		return "", nil, err
	}
	if err := netio.SetBackend(sys, b); err != nil {
		sys.Shutdown(context.Background())
		return "", nil, err
	}
	la := &colEchoListener{addr: make(chan string, 1), err: make(chan error, 1)}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
		netio.Stop(sys)
	}
	if _, err := sys.Spawn(la); err != nil {
		stop()
		return "", nil, err
	}
	select {
	case a := <-la.addr:
		if got := netio.BackendOf(sys); b != "" && got != b {
			stop()
			return "", nil, fmt.Errorf("netio backend %s asked, %s running (io_uring unavailable?)", b, got)
		}
		return a, stop, nil
	case err := <-la.err:
		stop()
		return "", nil, err
	}
}
