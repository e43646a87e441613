//go:build !nocolony

// The Colony side of the TCP echo workloads (tcpecho.go): one actor per connection, owning its
// socket, in active-once mode, as a gen_tcp echo server is written in Erlang.
package main

import (
	"context"
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

func startColonyEcho() (string, func(), error) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
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
		return a, stop, nil
	case err := <-la.err:
		stop()
		return "", nil, err
	}
}
