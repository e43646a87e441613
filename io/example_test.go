package netio_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// A server actor streams 4 MiB to a client with SendWait, which waits
// inside the handler (other actors keep running) whenever more than the
// high watermark is queued, until the client has read the queue down to
// the low watermark: the server's memory stays bounded however slowly the
// client reads, and no ErrBackpressure needs handling.
func ExampleConn_SendWait() {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		panic(err)
	}
	defer sys.Shutdown(context.Background())

	type serve struct {
		l    *netio.Listener
		done chan error
	}
	srv, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		m, ok := msg.(serve)
		if !ok {
			return // Drained
		}
		cn, err := m.l.Accept(c, 5*time.Second)
		m.l.Close()
		if err != nil {
			m.done <- err
			return
		}
		if err := cn.SetWatermarks(16<<10, 32<<10); err != nil {
			m.done <- err
			return
		}
		chunk := bytes.Repeat([]byte("colony! "), 8<<10) // 64 KiB
		for range 64 {
			if err := cn.SendWait(c, chunk, 10*time.Second); err != nil {
				m.done <- err // actor.ErrTimeout: the client took nothing for 10 s
				return
			}
		}
		m.done <- cn.Close() // what is still queued goes out, then EOF
	}))
	if err != nil {
		panic(err)
	}
	l, err := netio.Listen(sys, srv, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	cli, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		panic(err)
	}
	defer cli.Close()
	done := make(chan error, 1)
	sys.Send(srv, serve{l, done})

	n, err := io.Copy(io.Discard, cli)
	fmt.Println("client read", n, "bytes, then", err)
	fmt.Println("server:", <-done)
	// Output:
	// client read 4194304 bytes, then <nil>
	// server: <nil>
}

// An echo server that makes no garbage per round trip: each connection's
// actor reads with TryRead into a pooled buffer when a Readable says there
// is input, and echoes from it. No Data message is made and no byte is
// copied: the heap stays at its live size however much traffic passes
// (the TCP echo benchmark's Colony server is written so).
func ExampleConn_TryRead() {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		panic(err)
	}
	defer sys.Shutdown(context.Background())

	bufs := sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}
	echo := func(c *actor.Context, msg any) {
		m, ok := msg.(netio.Readable)
		if !ok {
			return
		}
		bp := bufs.Get().(*[]byte)
		defer bufs.Put(bp)
		for {
			n, err := m.Conn.TryRead(c, *bp)
			if n > 0 {
				m.Conn.Send((*bp)[:n]) // copies only what the kernel does not take now
				continue
			}
			if err != netio.ErrWouldBlock { // io.EOF, or the connection broke
				m.Conn.Close()
				c.Stop(actor.Normal)
			}
			return // ErrWouldBlock: a Readable will come with more
		}
	}
	// The listener's actor hands each connection to an echo actor, and
	// gives it a first Readable to start reading.
	lis, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if m, ok := msg.(netio.Accepted); ok {
			pid, err := c.Spawn(actor.ActorFunc(echo))
			if err != nil || m.Conn.ControllingProcess(c, pid) != nil {
				m.Conn.Close()
				return
			}
			c.Send(pid, netio.Readable{Conn: m.Conn})
		}
	}))
	if err != nil {
		panic(err)
	}
	l, err := netio.Listen(sys, lis, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	l.SetActive(netio.On)

	cli, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		panic(err)
	}
	defer cli.Close()
	r := bufio.NewReader(cli)
	for _, line := range []string{"hello\n", "colony\n"} {
		cli.Write([]byte(line))
		got, err := r.ReadString('\n')
		fmt.Printf("%q %v\n", got, err)
	}
	// Output:
	// "hello\n" <nil>
	// "colony\n" <nil>
}
