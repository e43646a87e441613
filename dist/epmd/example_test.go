package epmd_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/colonyrt/colony/dist/epmd"
)

// A registrar served in the process, a registration and a lookup.
func Example() {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := epmd.Serve(l)
	defer srv.Close()
	addr := l.Addr().String()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reg, err := epmd.Register(ctx, addr, epmd.Node{Name: "colony", Port: 4711, Type: epmd.NodeTypeNormal,
		High: epmd.HighVersion, Low: epmd.LowVersion})
	if err != nil {
		panic(err)
	}
	defer func() { reg.Close(); <-reg.Done() }()
	n, err := epmd.Lookup(ctx, addr, "colony")
	fmt.Println(n.Name, n.Port, n.High, err)
	// Output: colony 4711 6 <nil>
}
