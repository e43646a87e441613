package acceptor_test

import (
	"bufio"
	"context"
	"fmt"
	"net"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
	"github.com/colonyrt/colony/io/acceptor"
	"github.com/colonyrt/colony/supervisor"
)

// echo is a Handler: it owns its connection and echoes what it reads.
type echo struct {
	actor.ServerBase // no-op HandleCall, HandleCast and Terminate
	cn               *netio.Conn
}

func (e *echo) Init(c *actor.Context, cn *netio.Conn) error {
	e.cn = cn
	return cn.SetActive(netio.Once) // the first chunk of input, as a message
}

func (e *echo) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Data:
		e.cn.Send(m.Bytes)
		e.cn.SetActive(netio.Once) // the next chunk, once this one is handled
	case netio.Closed:
		c.Stop(actor.Normal) // our death closes the socket
	}
}

// An echo server: Start listens, and each connection gets an echo actor.
func Example() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	l, err := acceptor.Start(sys, "127.0.0.1:0", func() acceptor.Handler { return &echo{} })
	if err != nil {
		panic(err)
	}
	nc, _ := net.Dial("tcp", l.Addr().String())
	fmt.Fprintln(nc, "hello")
	line, _ := bufio.NewReader(nc).ReadString('\n')
	fmt.Print(line)
	nc.Close()
	fmt.Println(l.Stop(context.Background()), l.Accepted())
	// Output:
	// hello
	// <nil> 1
}

// A Listener in a service's supervision tree: New, then ChildSpec. The
// tree starts it in order and stops it in reverse.
func ExampleListener_ChildSpec() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	l, _ := acceptor.New("127.0.0.1:0", func() acceptor.Handler { return &echo{} },
		acceptor.Acceptors(2), acceptor.ConnsName("echo.conns"))
	_, err := supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.OneForOne,
		Children: []supervisor.ChildSpec{l.ChildSpec("listener")},
	})
	if err != nil {
		panic(err)
	}
	nc, _ := net.Dial("tcp", l.Addr().String())
	defer nc.Close()
	fmt.Fprintln(nc, "in a tree")
	line, _ := bufio.NewReader(nc).ReadString('\n')
	fmt.Print(line)
	conns, _ := sys.Whereis("echo.conns")
	n, _ := supervisor.CountChildren(sys, conns)
	fmt.Println("connection actors:", n.Active)
	// Output:
	// in a tree
	// connection actors: 1
}

// At MaxConns the listener accepts nothing until a connection ends.
func ExampleMaxConns() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	l, _ := acceptor.Start(sys, "127.0.0.1:0", func() acceptor.Handler { return &echo{} }, acceptor.MaxConns(1))
	talk := func(nc net.Conn, r *bufio.Reader, s string) string {
		fmt.Fprintln(nc, s)
		line, _ := r.ReadString('\n')
		return line
	}
	first, _ := net.Dial("tcp", l.Addr().String())
	fmt.Print(talk(first, bufio.NewReader(first), "first"))
	second, _ := net.Dial("tcp", l.Addr().String()) // waits in the backlog
	defer second.Close()
	fmt.Fprintln(second, "second")
	fmt.Println("conns:", l.Conns(), "accepted:", l.Accepted())
	first.Close() // its actor ends: the second is accepted
	line, _ := bufio.NewReader(second).ReadString('\n')
	fmt.Print(line)
	// Output:
	// first
	// conns: 1 accepted: 1
	// second
}
