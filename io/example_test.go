package netio_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
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
