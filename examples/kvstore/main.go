// Command kvstore is a small TCP key-value server built on Colony.
//
// A one_for_one supervisor owns two children: the store, a gen_server
// holding the map, and the listener (an acceptor.Listener: a listening
// socket, its acceptors and a supervisor of one actor per connection).
// Each connection actor owns its socket in active once mode, reads line
// commands and calls the store with a timeout:
//
//	GET k     -> VALUE v | NOTFOUND
//	PUT k v   -> OK
//	DEL k     -> OK
//	CRASH     -> the store panics: the caller gets ERR, the supervisor
//	             restarts the store (empty), and later calls work again
//
// Usage:
//
//	go run ./examples/kvstore -addr 127.0.0.1:7070
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
	"github.com/colonyrt/colony/io/acceptor"
	"github.com/colonyrt/colony/supervisor"
)

const (
	storeName   = "store"
	callTimeout = time.Second
	maxLine     = 4 << 10
)

// The store: a typed gen_server. Its state is lost when it crashes.

// storeReq is a parsed command: op is GET, PUT, DEL or CRASH.
type storeReq struct{ op, key, val string }

type storeRep struct {
	val   string
	found bool
}

type storeRef = actor.ServerRef[storeReq, storeRep, any]

type store struct {
	actor.ServerBase // no-op HandleCast, HandleInfo, Terminate
	m                map[string]string
}

func newStore(...any) actor.Server {
	return actor.Typed[storeReq, storeRep, any](&store{})
}

func (s *store) Init(*actor.Context) error {
	s.m = make(map[string]string)
	return nil
}

func (s *store) HandleCall(c *actor.Context, q storeReq, from actor.ReplyTo[storeRep]) {
	switch q.op {
	case "GET":
		v, ok := s.m[q.key]
		from.Reply(c, storeRep{v, ok})
	case "PUT":
		s.m[q.key] = q.val
		from.Reply(c, storeRep{})
	case "DEL":
		delete(s.m, q.key)
		from.Reply(c, storeRep{})
	case "CRASH":
		panic("store: crash requested")
	}
}

// A connection actor: an acceptor.Handler, one per connection, started by
// the listener's acceptors under its connection supervisor. It owns its
// socket, in active once mode; one command per line.

type conn struct {
	actor.ServerBase
	cn  *netio.Conn
	buf []byte
}

func (k *conn) Init(c *actor.Context, cn *netio.Conn) error {
	k.cn = cn // acceptor.Active(netio.Once) arms it once Init returns
	return nil
}

func (k *conn) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Data:
		k.buf = append(k.buf, m.Bytes...)
		for {
			i := bytes.IndexByte(k.buf, '\n')
			if i < 0 {
				break
			}
			line := string(k.buf[:i])
			k.buf = k.buf[i+1:]
			if k.cn.Send([]byte(k.do(c, line)+"\n")) != nil {
				c.Stop(actor.Normal) // the peer is gone; our death closes the socket
				return
			}
		}
		if len(k.buf) > maxLine {
			// Our death closes the socket after its queued output has
			// gone out (netio's linger), so the reply is not lost.
			k.cn.Send([]byte("ERR line too long\n"))
			c.Stop(actor.Normal)
			return
		}
		k.cn.SetActive(netio.Once) // ask for the next chunk only now: backpressure
	case netio.Closed: // peer closed (an Error, if any, came first)
		c.Stop(actor.Normal)
	}
}

var arity = map[string]int{"GET": 2, "PUT": 3, "DEL": 2, "CRASH": 1}

// do runs one command line and returns the reply line.
func (k *conn) do(c *actor.Context, line string) string {
	f := strings.Fields(line)
	if len(f) == 0 || arity[f[0]] != len(f) {
		return "ERR bad command"
	}
	f = append(f, "", "")
	q := storeReq{op: f[0], key: f[1], val: f[2]}
	pid, ok := c.System().Whereis(storeName)
	if !ok {
		return "ERR store unavailable" // between its death and its restart
	}
	r, err := storeRef{Pid: pid}.Call(c, q, callTimeout)
	switch {
	case errors.Is(err, actor.ErrNoProc): // it died before (or while) answering
		return "ERR store unavailable"
	case err != nil:
		return "ERR " + err.Error()
	case q.op != "GET":
		return "OK"
	case r.found:
		return "VALUE " + r.val
	}
	return "NOTFOUND"
}

// server is a running kvstore: its System and its supervision tree.
type server struct {
	sys  *actor.System
	sup  actor.Pid
	addr string          // the listener's address, with the port it got
	down <-chan struct{} // closed when the supervisor exits (it gave up restarting)
}

// start runs a kvstore listening on addr. logf receives crash reports.
func start(addr string, logf func(string, ...any)) (*server, error) {
	l, err := acceptor.New(addr, func() acceptor.Handler { return &conn{} }, acceptor.Active(netio.Once))
	if err != nil {
		return nil, err
	}
	sys, err := actor.Start(actor.Config{Logger: logf})
	if err != nil {
		return nil, err
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy:  supervisor.OneForOne,
		Intensity: 3,
		Period:    5 * time.Second,
		Children: []supervisor.ChildSpec{ // started in order, stopped in reverse
			{ID: "store", Start: supervisor.ServerStart(newStore, actor.WithSpawn(actor.Name(storeName)))},
			l.ChildSpec("listener"),
		},
	})
	s := &server{sys: sys, sup: sup}
	if err == nil { // up: Start returns once all children are
		s.addr = l.Addr().String()
	}
	var top *actor.Watch
	if err == nil { // a monitor from outside: main learns when the tree gives up
		top, err = sys.Monitor(sup)
	}
	if err == nil {
		s.down = top.Done()
	}
	if err != nil {
		s.stop(time.Second)
		return nil, err
	}
	return s, nil
}

// stop shuts the tree down in order (listener, connections, store) and the
// System with it; every socket dies with its owner, and Shutdown returns
// once the socket poller's goroutine and fds are gone too.
func (s *server) stop(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.sys.Shutdown(ctx)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7070", "listen address")
	flag.Parse()
	s, err := start(*addr, log.Printf)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("kvstore: listening on %s", s.addr)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	select {
	case <-ctx.Done():
	case <-s.down:
		log.Print("kvstore: supervisor gave up")
	}
	if err := s.stop(5 * time.Second); err != nil {
		log.Fatal(err)
	}
}
