// Command linekv is a line-based TCP key-value server built on Colony.
//
// The protocol is one command per line ("\n", an optional "\r" before it is
// ignored), answered by one reply line, in order:
//
//	SET k v   -> OK              (v is the rest of the line, spaces and all)
//	GET k     -> VALUE v | NIL
//	DEL k     -> DELETED | NIL
//	QUIT      -> BYE, and the server closes the connection
//	anything  -> ERR ...
//
// A line longer than maxLine is answered with ERR line too long and the
// connection is closed. Input after QUIT is ignored; a partial last line
// before the client's EOF is ignored too.
//
// The tree (one_for_one, started in this order, stopped in reverse):
//
//	store     a typed gen_server holding the map (registered linekv.store)
//	listener  an acceptor.Listener: the listening socket, its acceptors and
//	          linekv.conns, the supervisor of the connection actors (each
//	          an acceptor.Handler, handed its socket before its Init)
//
// A connection actor owns its socket. The default one reads in active once
// mode; with -passive, it reads with the blocking Conn.Recv. Either way it
// stops reading a client that does not read its replies: once more than
// highWater bytes of replies are queued (or Send says ErrBackpressure) it
// waits for Drained before it takes the next command.
//
// Run with no flags, it serves on a loopback port, runs a short self-demo
// as a client, prints the conversation and exits. With -serve it serves on
// -addr until SIGINT/SIGTERM.
//
//	go run ./examples/linekv
//	go run ./examples/linekv -serve -addr 127.0.0.1:7070 [-passive]
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
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
	storeName   = "linekv.store"
	connsName   = "linekv.conns"
	callTimeout = 5 * time.Second
	maxLine     = 2 << 20 // a command line, "SET k v" with v up to ~2 MiB
	// stallTimeout: a client that reads none of its queued replies for
	// this long is dropped.
	stallTimeout = 30 * time.Second
	// recvSlice: a passive connection's Recv waits this long at a time, so
	// that it goes back to its mailbox now and then.
	recvSlice = time.Second
	// quitLinger: after QUIT's reply, how long the server reads and drops
	// the client's input while it waits for the client to close.
	quitLinger = 2 * time.Second
)

// Options configure a server.
type Options struct {
	// Passive: connection actors read with Conn.Recv instead of active once.
	Passive bool
	// SendQueueLimit bounds each connection's queued output (0: netio's
	// default). A Send past it fails with ErrBackpressure.
	SendQueueLimit int
	// HighWater: stop taking commands while more than this is queued
	// (0: 1 MiB; negative: never, rely on ErrBackpressure alone).
	HighWater int
}

// The store.

type storeReq struct {
	op       string // SET, GET, DEL
	key, val string
}

type storeRep struct {
	val   string
	found bool
}

type storeRef = actor.ServerRef[storeReq, storeRep, any]

type store struct {
	actor.ServerBase
	m map[string]string
}

func newStore(...any) actor.Server { return actor.Typed[storeReq, storeRep, any](&store{}) }

func (s *store) Init(*actor.Context) error {
	s.m = make(map[string]string)
	return nil
}

func (s *store) HandleCall(c *actor.Context, q storeReq, from actor.ReplyTo[storeRep]) {
	switch q.op {
	case "SET":
		s.m[q.key] = q.val
		from.Reply(c, storeRep{})
	case "GET":
		v, ok := s.m[q.key]
		from.Reply(c, storeRep{v, ok})
	case "DEL":
		_, ok := s.m[q.key]
		delete(s.m, q.key)
		from.Reply(c, storeRep{found: ok})
	default:
		from.ReplyError(c, fmt.Errorf("store: bad op %q", q.op))
	}
}

// The protocol, shared by both kinds of connection actor.

// session is a connection's input buffer and command interpreter.
type session struct {
	cn  *netio.Conn
	buf []byte // input not yet taken; buf[off:] is unread
	off int
}

// next returns the next complete line, or false.
func (s *session) next() ([]byte, bool) {
	i := bytes.IndexByte(s.buf[s.off:], '\n')
	if i < 0 {
		return nil, false
	}
	line := s.buf[s.off : s.off+i]
	s.off += i + 1
	return bytes.TrimSuffix(line, []byte{'\r'}), true
}

// compact drops the lines taken, before the buffer grows again.
func (s *session) compact() {
	if s.off == 0 {
		return
	}
	rest := len(s.buf) - s.off
	if rest == 0 {
		s.buf, s.off = s.buf[:0], 0
		if cap(s.buf) > 64<<10 {
			s.buf = nil // let a large value's buffer go
		}
		return
	}
	s.buf = append(s.buf[:0:0], s.buf[s.off:]...)
	s.off = 0
}

// overlong says the unfinished line is past maxLine.
func (s *session) overlong() bool { return len(s.buf)-s.off > maxLine }

// exec runs one command and returns its reply line (with "\n").
func exec(c *actor.Context, line []byte) (reply []byte, quit bool) {
	cmd, rest, _ := bytes.Cut(line, []byte{' '})
	var q storeReq
	switch string(cmd) {
	case "QUIT":
		return []byte("BYE\n"), true
	case "SET":
		k, v, ok := bytes.Cut(rest, []byte{' '})
		if !ok || len(k) == 0 {
			return []byte("ERR usage: SET key value\n"), false
		}
		q = storeReq{op: "SET", key: string(k), val: string(v)}
	case "GET", "DEL":
		if len(rest) == 0 || bytes.IndexByte(rest, ' ') >= 0 {
			return []byte("ERR usage: " + string(cmd) + " key\n"), false
		}
		q = storeReq{op: string(cmd), key: string(rest)}
	default:
		return []byte("ERR unknown command\n"), false
	}
	r, err := storeRef{Name: storeName}.Call(c, q, callTimeout)
	switch {
	case err != nil:
		return []byte("ERR store unavailable\n"), false
	case q.op == "SET":
		return []byte("OK\n"), false
	case !r.found:
		return []byte("NIL\n"), false
	case q.op == "DEL":
		return []byte("DELETED\n"), false
	}
	out := make([]byte, 0, len("VALUE \n")+len(r.val))
	out = append(append(append(out, "VALUE "...), r.val...), '\n')
	return out, false
}

// quitTimeout ends a connection's wait for its client's close after QUIT.
type quitTimeout struct{}

// stall is a connection's check that its client has read something since
// it paused: armed with the count of Drained seen then.
type stall struct{ drained int }

// activeConn reads in active once mode. It asks for the next chunk of
// input only once it has answered every complete line it holds, and it
// stops answering while its client does not read: then it waits for
// Drained.
type activeConn struct {
	actor.ServerBase
	session
	queueLimit int
	highWater  int
	paused     bool   // waiting for Drained
	held       []byte // a reply Send refused (ErrBackpressure): sent first on Drained
	drained    int    // Drained messages seen
	eof        bool   // the client closed its side (Closed)
	quit       bool   // QUIT answered: close once the reply is sent
	draining   bool   // QUIT's reply sent, write side closed: dropping input until the client closes
	done       bool   // stopping
}

// Init runs once the actor owns the socket (an acceptor.Handler).
func (k *activeConn) Init(c *actor.Context, cn *netio.Conn) error {
	k.cn = cn
	setQueueLimit(cn, k.queueLimit)
	k.run(c)
	return nil
}

func (k *activeConn) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Data:
		if k.draining {
			k.drain(c)
			return
		}
		k.buf = append(k.buf, m.Bytes...)
		k.run(c)
	case netio.Closed: // after every Data; an Error, if any, came first
		k.eof = true
		if k.draining {
			k.stop(c)
			return
		}
		k.run(c)
	case quitTimeout:
		k.stop(c)
	case netio.Drained:
		k.drained++
		if !k.paused {
			return
		}
		k.paused = false
		if h := k.held; h != nil {
			k.held = nil
			if !k.send(c, h) {
				return
			}
		}
		k.run(c)
	case netio.Error: // reset by the client, or a write failed: it is gone
		k.stop(c)
	case stall:
		if k.paused && m.drained == k.drained {
			c.System().Log("linekv: %v: client reads nothing for %v, dropped", k.cn.RemoteAddr(), stallTimeout)
			k.cn.SetLinger(0)
			k.stop(c)
		}
	}
}

// run answers the complete lines held, then reads on (or closes).
func (k *activeConn) run(c *actor.Context) {
	for !k.done && !k.paused {
		if k.quit {
			k.drain(c)
			return
		}
		line, ok := k.next()
		if !ok {
			break
		}
		reply, quit := exec(c, line)
		k.quit = quit
		if !k.send(c, reply) {
			return
		}
	}
	switch {
	case k.done, k.paused:
	case k.overlong():
		k.send(c, []byte("ERR line too long\n"))
		k.stop(c)
	case k.eof: // nothing more will come: a partial last line is dropped
		k.stop(c)
	default:
		k.compact()
		if err := k.cn.SetActive(netio.Once); err != nil {
			k.stop(c)
		}
	}
}

// drain ends the connection after QUIT's reply: closing it at once with
// input unread (commands pipelined after QUIT) would make the kernel reset
// it, and the client would read ECONNRESET instead of EOF (or, over a real
// network, perhaps lose the reply: TestLastReplyWithUnreadInputReachesPeer in
// io/). So half-close (after the queued replies), drop input until the
// client closes, for at most quitLinger.
func (k *activeConn) drain(c *actor.Context) {
	if !k.draining {
		k.draining = true
		k.buf, k.off = nil, 0
		if k.eof || k.cn.CloseWrite() != nil {
			k.stop(c)
			return
		}
		c.SendAfter(c.Self(), quitTimeout{}, quitLinger)
	}
	if err := k.cn.SetActive(netio.Once); err != nil {
		k.stop(c)
	}
}

// send sends a reply; false if the client is gone (and we are stopping).
func (k *activeConn) send(c *actor.Context, b []byte) bool {
	err := k.cn.Send(b)
	switch {
	case err == nil:
		if k.highWater > 0 && k.cn.Pending() > k.highWater {
			k.pause(c)
		}
		return true
	case errors.Is(err, netio.ErrBackpressure):
		k.held = b
		k.pause(c)
		return true
	}
	k.stop(c) // EPIPE, ECONNRESET: nobody to answer
	return false
}

func (k *activeConn) pause(c *actor.Context) {
	k.paused = true
	c.SendAfter(c.Self(), stall{k.drained}, stallTimeout)
}

// stop closes the socket and stops. Replies still queued are written out
// after the close (netio's linger), so a last reply is not lost.
func (k *activeConn) stop(c *actor.Context) {
	if k.done {
		return
	}
	k.done = true
	k.cn.Close()
	c.Stop(actor.Normal)
}

// passiveConn reads with the blocking Conn.Recv, one Recv per readMore
// message, so that its mailbox (and the exit signals of a shutdown) is
// looked at between reads.
type passiveConn struct {
	actor.ServerBase
	session
	queueLimit int
	highWater  int
}

type readMore struct{}

// Init runs once the actor owns the socket (an acceptor.Handler).
func (k *passiveConn) Init(c *actor.Context, cn *netio.Conn) error {
	k.cn = cn
	setQueueLimit(cn, k.queueLimit)
	return c.Send(c.Self(), readMore{}) // read from HandleInfo: a shutdown is seen between reads
}

// setQueueLimit applies Options.SendQueueLimit (0: netio's default).
func setQueueLimit(cn *netio.Conn, n int) {
	if n > 0 {
		_ = cn.SetSendQueueLimit(n) // positive, on an open Conn: cannot fail
	}
}

func (k *passiveConn) HandleInfo(c *actor.Context, msg any) {
	switch msg.(type) {
	case readMore:
		k.step(c)
	} // Drained and Error messages are taken by waitDrained's selective receive, or dropped here.
}

func (k *passiveConn) step(c *actor.Context) {
	b, err := k.cn.Recv(c, 0, recvSlice)
	k.buf = append(k.buf, b...)
	for {
		line, ok := k.next()
		if !ok {
			break
		}
		reply, quit := exec(c, line)
		if !k.send(c, reply) {
			return
		}
		if quit {
			k.drain(c, err)
			return
		}
	}
	switch {
	case k.overlong():
		k.send(c, []byte("ERR line too long\n"))
		k.stop(c)
	case err == nil, errors.Is(err, actor.ErrTimeout):
		k.compact()
		c.Send(c.Self(), readMore{})
	default: // io.EOF (a partial last line is dropped), or a reset
		k.stop(c)
	}
}

// send sends a reply, waiting for Drained while the client is behind;
// false if the client is gone (and we are stopping).
func (k *passiveConn) send(c *actor.Context, b []byte) bool {
	for {
		err := k.cn.Send(b)
		if err == nil {
			break
		}
		if !errors.Is(err, netio.ErrBackpressure) || !k.waitDrained(c) {
			k.stop(c)
			return false
		}
	}
	for k.highWater > 0 && k.cn.Pending() > k.highWater {
		if !k.waitDrained(c) {
			k.stop(c)
			return false
		}
	}
	return true
}

// drain ends the connection after QUIT's reply (see activeConn.drain):
// half-close, then read and drop input until the client's EOF, for at most
// quitLinger. readErr is the last Recv's.
func (k *passiveConn) drain(c *actor.Context, readErr error) {
	if readErr == nil || errors.Is(readErr, actor.ErrTimeout) {
		if k.cn.CloseWrite() == nil {
			deadline := time.Now().Add(quitLinger)
			for {
				_, err := k.cn.Recv(c, 0, time.Until(deadline))
				if err != nil {
					break
				}
			}
		}
	}
	k.stop(c)
}

// waitDrained waits for a Drained (perhaps one from an earlier flush: the
// caller checks again); false on an Error or a stall.
func (k *passiveConn) waitDrained(c *actor.Context) bool {
	m, err := c.Receive(func(m any) bool {
		switch m := m.(type) {
		case netio.Drained:
			return m.Conn == k.cn
		case netio.Error:
			return m.Conn == k.cn
		}
		return false
	}, stallTimeout)
	_, ok := m.(netio.Drained)
	return err == nil && ok
}

func (k *passiveConn) stop(c *actor.Context) {
	k.cn.Close()
	c.Stop(actor.Normal)
}

// server is a running linekv.
type server struct {
	sys  *actor.System
	sup  actor.Pid
	addr string
	down <-chan struct{} // closed when the top supervisor exits
}

func start(addr string, opt Options, logf func(string, ...any)) (*server, error) {
	hw := opt.HighWater
	if hw == 0 {
		hw = 1 << 20
	}
	newConn := func() acceptor.Handler {
		if opt.Passive {
			return &passiveConn{queueLimit: opt.SendQueueLimit, highWater: hw}
		}
		return &activeConn{queueLimit: opt.SendQueueLimit, highWater: hw}
	}
	l, err := acceptor.New(addr, newConn, acceptor.ConnsName(connsName), acceptor.ConnShutdown(time.Second))
	if err != nil {
		return nil, err
	}
	sys, err := actor.Start(actor.Config{Logger: logf})
	if err != nil {
		return nil, err
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy:  supervisor.OneForOne,
		Intensity: 5,
		Period:    10 * time.Second,
		Children: []supervisor.ChildSpec{
			{ID: "store", Start: supervisor.ServerStart(newStore, actor.WithSpawn(actor.Name(storeName)))},
			l.ChildSpec("listener"), // the connections' supervisor is in it
		},
	})
	s := &server{sys: sys, sup: sup}
	var top *actor.Watch
	if err == nil {
		top, err = sys.Monitor(sup)
	}
	if err == nil {
		s.down = top.Done()
		s.addr = l.Addr().String()
	}
	if err != nil {
		s.stop(time.Second)
		return nil, err
	}
	return s, nil
}

// stop shuts the tree down (listener, connections, store); the replies
// still queued go out within timeout.
func (s *server) stop(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.sys.Shutdown(ctx)
}

// demo talks to the server as a client would and prints the conversation.
func demo(w io.Writer, addr string) error {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(nc)
	// Pipelined, in pieces that cut lines in the middle.
	script := "SET greeting hello world\nGET greeting\nSET big " + strings.Repeat("x", 100000) +
		"\nGET nothing\nDEL greeting\nGET greeting\nFROB\nQUIT\nGET never-answered\n"
	for i := 0; i < len(script); i += 7 {
		if _, err := io.WriteString(nc, script[i:min(i+7, len(script))]); err != nil {
			return err
		}
	}
	for _, cmd := range strings.SplitAfter(script, "\n") {
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reply to %.20q: %w", cmd, err)
		}
		if len(cmd) > 40 {
			cmd = cmd[:30] + fmt.Sprintf("... (%d bytes)\n", len(cmd))
		}
		fmt.Fprintf(w, "> %s< %s", cmd, line)
		if line == "BYE\n" {
			break
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return fmt.Errorf("after BYE: %v, want EOF", err)
	}
	fmt.Fprintln(w, "(closed by the server)")
	return nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	serve := flag.Bool("serve", false, "serve until SIGINT/SIGTERM instead of running the demo")
	passive := flag.Bool("passive", false, "connection actors read with Conn.Recv")
	flag.Parse()
	s, err := start(*addr, Options{Passive: *passive}, log.Printf)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("linekv: listening on %s", s.addr)
	if *serve {
		ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer cancel()
		select {
		case <-ctx.Done():
		case <-s.down:
			log.Print("linekv: supervisor gave up")
		}
	} else if err := demo(os.Stdout, s.addr); err != nil {
		s.stop(time.Second)
		log.Fatal(err)
	}
	if err := s.stop(5 * time.Second); err != nil {
		log.Fatal(err)
	}
}
