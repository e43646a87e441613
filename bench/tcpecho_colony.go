//go:build !nocolony

// The Colony side of the TCP echo workloads (tcpecho.go): one actor per connection, owning its
// socket. colony, colony-uring and colony-portable read with TryRead into a pooled 4 KiB buffer
// and echo from it, woken by Readable: a round trip makes no garbage, as the goroutine server's
// does not (it reuses its buffer). colony-once runs in active-once mode instead, as a gen_tcp
// echo server is written in Erlang: a Data message and a copy of its bytes per round trip, the
// poller doing the reads (TCPECHO_COLONY_READ=once makes every Colony implementation so). colony
// and colony-once run on netio's default backend (epoll on Linux), colony-uring and
// colony-portable on the others (netio.SetBackend); a Uring that falls back to epoll says so in
// the sample's note.
package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// colEchoListener owns the listening socket (active: Accepted messages) and spawns one echo
// actor per accepted connection, handing it the socket.
type colEchoListener struct {
	once bool // active-once connections, else TryRead
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
	handler := colEchoTry
	if e.once {
		handler = colEchoConn
	}
	child, err := c.Spawn(actor.ActorFunc(handler))
	if err != nil || m.Conn.ControllingProcess(c, child) != nil {
		m.Conn.Close()
		return
	}
	if e.once {
		m.Conn.SetActive(netio.Once)
		return
	}
	c.Send(child, netio.Readable{Conn: m.Conn}) // its first TryRead
}

// colEchoOnce: TCPECHO_COLONY_READ=once, the active-once server.
var colEchoOnce = os.Getenv("TCPECHO_COLONY_READ") == "once"

// colEchoBufs are the TryRead server's buffers, held only while a handler runs.
var colEchoBufs = sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}

// colEchoTry reads what the socket has into a pooled buffer and echoes it, until TryRead says
// ErrWouldBlock (and a Readable will follow); it stops when the peer closes.
func colEchoTry(c *actor.Context, msg any) {
	m, ok := msg.(netio.Readable)
	if !ok {
		return
	}
	bp := colEchoBufs.Get().(*[]byte)
	defer colEchoBufs.Put(bp)
	for {
		n, err := m.Conn.TryRead(c, *bp)
		if n > 0 {
			m.Conn.Send((*bp)[:n])
			continue
		}
		if err != netio.ErrWouldBlock {
			m.Conn.Close()
			c.Stop(actor.Normal)
		}
		return
	}
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

func startColonyEcho() (string, func(), error) { return startColonyEchoOn("", colEchoOnce)() }

// startColonyEchoOn is startColonyEcho on backend b ("" for the default), in active-once mode
// if once.
func startColonyEchoOn(b netio.Backend, once bool) tcpEchoServer {
	return func() (string, func(), error) { return startColonyEchoBackend(b, once) }
}

func startColonyEchoBackend(b netio.Backend, once bool) (string, func(), error) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		return "", nil, err
	}
	if err := netio.SetBackend(sys, b); err != nil {
		sys.Shutdown(context.Background())
		return "", nil, err
	}
	la := &colEchoListener{once: once, addr: make(chan string, 1), err: make(chan error, 1)}
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
