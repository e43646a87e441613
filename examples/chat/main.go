// Command chat is a small TCP chat server built on Colony.
//
// A one_for_one supervisor owns, in start order:
//
//   - rooms: a gen_server registered as "chat.rooms" that knows every
//     client's nick and room, hands out guest nicks, keeps room topics and
//     announces joins, leaves and nick changes. It monitors every client, so
//     a client that quits, crashes or is kicked is cleaned up.
//   - conns: a simple_one_for_one supervisor of connection actors
//     (temporary), one per TCP connection, each owning its socket in active
//     once mode and kicking its client after an idle spell (SendAfter).
//   - listener: a gen_server owning the listening socket; it starts a
//     connection actor for each accepted connection and hands it the socket.
//
// A room is a process group ("chat.room:NAME") of connection actors: a plain
// line is sent by the client's actor to every member, so lines from one
// sender reach everyone in the order they were sent. Memberships die with
// their actors, so they survive a crash of the rooms server; its own state
// (nicks, topics) is lost and rebuilt from the clients, which monitor it and
// register again when it is back. Topics are not rebuilt.
//
// Protocol, one command per line:
//
//	/join ROOM    leave the current room, join ROOM
//	/nick NAME    change nick
//	/rooms        list rooms with their member counts
//	/who          list the members of the current room, and its topic
//	/topic TEXT   set the current room's topic
//	/quit         disconnect
//	TEXT          say TEXT in the current room: "<nick> TEXT"
//
// Usage:
//
//	go run ./examples/chat -addr 127.0.0.1:7070 -idle 5m
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
	"github.com/colonyrt/colony/supervisor"
)

const (
	roomsName    = "chat.rooms"
	connsName    = "chat.conns"
	listenerName = "chat.listener"
	callTimeout  = time.Second
	retryEvery   = 20 * time.Millisecond // a client's next try to reach rooms
	byeTimeout   = time.Second           // how long a leaving client's last line may take
	maxLine      = 4 << 10
)

func group(room string) string { return "chat.room:" + room }

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,24}$`).MatchString

var (
	errUnavailable = errors.New("room service unavailable, try again")
	errNickTaken   = errors.New("nick taken")
	errNoRoom      = errors.New("/join a room first")
	errUnknown     = errors.New("unknown client")
)

// Calls to the rooms server (answered with a string or an error), its one
// cast, and the line a connection actor writes to its client.
type (
	hello     struct{ nick, room string } // register (again): answers the nick given
	setNick   struct{ nick string }
	joinRoom  struct{ room string }
	listRooms struct{}
	who       struct{}
	setTopic  struct {
		from  actor.Pid
		topic string
	}
	out string
)

// The rooms server.

type member struct {
	nick, room string
	ref        actor.Ref // our monitor of the client's actor
}

type rooms struct {
	actor.ServerBase
	members map[actor.Pid]*member
	nicks   map[string]actor.Pid
	topics  map[string]string
	guests  int
}

func newRooms(...any) actor.Server {
	return &rooms{members: map[actor.Pid]*member{}, nicks: map[string]actor.Pid{}, topics: map[string]string{}}
}

func (r *rooms) HandleCall(c *actor.Context, req actor.Request) {
	from := req.From()
	m := r.members[from]
	if q, ok := req.Msg.(hello); ok {
		if m == nil {
			ref, err := c.Monitor(from)
			if err != nil {
				c.ReplyError(req, err)
				return
			}
			m = &member{ref: ref}
			r.members[from] = m
		}
		delete(r.nicks, m.nick)
		m.nick, m.room = q.nick, q.room
		if p, taken := r.nicks[m.nick]; m.nick == "" || taken && p != from {
			r.guests++
			m.nick = fmt.Sprint("guest", r.guests)
		}
		r.nicks[m.nick] = from
		c.Reply(req, m.nick)
		return
	}
	if m == nil {
		c.ReplyError(req, errUnknown)
		return
	}
	switch q := req.Msg.(type) {
	case setNick:
		if p, taken := r.nicks[q.nick]; taken && p != from {
			c.ReplyError(req, errNickTaken)
			return
		}
		old := m.nick
		delete(r.nicks, old)
		r.nicks[q.nick], m.nick = from, q.nick
		c.Reply(req, q.nick)
		if m.room == "" {
			c.Send(from, out("* you are now known as "+q.nick))
		} else {
			r.tell(c, m.room, actor.Pid{}, "* %s is now known as %s", old, q.nick)
		}
	case joinRoom: // the client has joined the group, and leaves its old one after
		if m.room != "" {
			r.tell(c, m.room, from, "* %s left #%s", m.nick, m.room)
		}
		m.room = q.room
		r.tell(c, q.room, actor.Pid{}, "* %s joined #%s", m.nick, q.room)
		if t := r.topics[q.room]; t != "" {
			c.Send(from, out(fmt.Sprintf("* topic of #%s: %s", q.room, t)))
		}
		c.Reply(req, "")
	case listRooms:
		n := map[string]int{}
		for _, m := range r.members {
			if m.room != "" {
				n[m.room]++
			}
		}
		var rs []string
		for room, k := range n {
			rs = append(rs, fmt.Sprintf("#%s (%d)", room, k))
		}
		slices.Sort(rs)
		c.Reply(req, "* rooms: "+strings.Join(rs, ", "))
	case who:
		if m.room == "" {
			c.ReplyError(req, errNoRoom)
			return
		}
		var nicks []string
		for _, p := range c.System().GroupMembers(group(m.room)) {
			if o := r.members[p]; o != nil { // else: not registered again yet
				nicks = append(nicks, o.nick)
			}
		}
		s := fmt.Sprintf("* in #%s: %s", m.room, strings.Join(nicks, " "))
		if t := r.topics[m.room]; t != "" {
			s += " (topic: " + t + ")"
		}
		c.Reply(req, s)
	default:
		r.ServerBase.HandleCall(c, req) // ErrUnhandled
	}
}

func (r *rooms) HandleCast(c *actor.Context, msg any) {
	if q, ok := msg.(setTopic); ok {
		if m := r.members[q.from]; m != nil && m.room != "" {
			r.topics[m.room] = q.topic
			r.tell(c, m.room, actor.Pid{}, "* %s set the topic of #%s: %s", m.nick, m.room, q.topic)
		}
	}
}

func (r *rooms) HandleInfo(c *actor.Context, msg any) {
	d, ok := msg.(actor.Down)
	m := r.members[d.Pid]
	if !ok || m == nil || m.ref != d.Ref {
		return
	}
	delete(r.members, d.Pid)
	if r.nicks[m.nick] == d.Pid {
		delete(r.nicks, m.nick)
	}
	if m.room != "" { // the dead actor has left the group already
		r.tell(c, m.room, actor.Pid{}, "* %s left #%s (%s)", m.nick, m.room, why(d.Reason))
	}
}

func why(reason actor.Reason) string {
	switch {
	case actor.IsNormal(reason):
		return "quit"
	case reason == actor.ShutdownWith{Reason: "idle"}:
		return "idle"
	case actor.IsShutdown(reason):
		return "server shutting down"
	}
	return fmt.Sprint("crashed: ", reason)
}

// tell sends a line to every member of room but skip.
func (r *rooms) tell(c *actor.Context, room string, skip actor.Pid, format string, args ...any) {
	line := out(fmt.Sprintf(format, args...))
	for _, p := range c.System().GroupMembers(group(room)) {
		if p != skip {
			c.Send(p, line)
		}
	}
}

// A connection actor: owns its socket, registers with the rooms server.

type (
	register  struct{} // try to (re)register with the rooms server
	idleCheck int      // the idle timer that was armed as number n
	forceStop struct{} // a leaving client's last line took too long
)

type conn struct {
	actor.ServerBase
	cn         *netio.Conn
	idle       time.Duration
	buf        []byte
	nick, room string
	srv        actor.Pid // the rooms server, while registered with it
	srvRef     actor.Ref
	idleN      int
	idleT      actor.TimerRef
	leaving    bool // stop once the last line is written
	reason     actor.Reason
}

func (k *conn) Init(c *actor.Context) error {
	c.TrapExit(true) // the supervisor's shutdown reaches Terminate: say goodbye
	k.armIdle(c)
	return c.Send(c.Self(), register{}) // not in Init: rooms may be restarting
}

func (k *conn) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Data:
		if !k.leaving {
			k.input(c, m.Bytes)
		}
	case netio.Closed: // the peer closed (an Error, if any, came first)
		k.leaving = true
		c.Stop(actor.Normal)
	case netio.Drained, forceStop:
		if k.leaving {
			c.Stop(k.reason)
		}
	case out:
		k.write(c, string(m))
	case register:
		k.register(c)
	case actor.Down: // the rooms server died: the supervisor restarts it
		if m.Ref == k.srvRef && !k.srv.IsZero() {
			k.srv = actor.Pid{}
			k.write(c, "* room service restarting")
			k.register(c)
		}
	case idleCheck:
		if int(m) == k.idleN { // not a timer cancelled too late
			k.bye(c, fmt.Sprint("* idle for ", k.idle, ", bye"), actor.ShutdownWith{Reason: "idle"})
		}
	}
}

func (k *conn) Terminate(c *actor.Context, reason actor.Reason) {
	if k.leaving || !actor.IsShutdown(reason) {
		return
	}
	// Our death closes the socket, dropping what the kernel has not taken.
	if k.cn.Send([]byte("* server shutting down\n")) == nil && k.cn.Pending() > 0 {
		c.Receive(func(m any) bool { d, ok := m.(netio.Drained); return ok && d.Conn == k.cn }, byeTimeout)
	}
}

func (k *conn) register(c *actor.Context) {
	if pid, ok := c.System().Whereis(roomsName); ok {
		ref, err := c.Monitor(pid)
		if err == nil {
			nick, err := actor.Call[string](c, pid, hello{k.nick, k.room}, callTimeout)
			switch {
			case err == nil && k.nick == "":
				k.write(c, fmt.Sprintf("* welcome, %s: /join ROOM, /nick NAME, /rooms, /who, /topic TEXT, /quit", nick))
			case err == nil && nick != k.nick:
				k.write(c, "* room service is back; your nick was taken, you are now "+nick)
			case err == nil:
				k.write(c, "* room service is back")
			}
			if err == nil {
				k.nick, k.srv, k.srvRef = nick, pid, ref
				return
			}
			c.Demonitor(ref, true)
		}
	}
	c.SendAfter(c.Self(), register{}, retryEvery)
}

func (k *conn) armIdle(c *actor.Context) {
	c.CancelTimer(k.idleT)
	k.idleN++
	k.idleT, _ = c.SendAfter(c.Self(), idleCheck(k.idleN), k.idle)
}

func (k *conn) input(c *actor.Context, b []byte) {
	k.armIdle(c)
	k.buf = append(k.buf, b...)
	for !k.leaving {
		i := bytes.IndexByte(k.buf, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(k.buf[:i]))
		k.buf = k.buf[i+1:]
		k.command(c, line)
	}
	switch {
	case k.leaving:
	case len(k.buf) > maxLine:
		k.bye(c, "ERR line too long", actor.Normal)
	default:
		k.cn.SetActive(netio.Once) // only now: a client cannot flood us
	}
}

func (k *conn) command(c *actor.Context, line string) {
	cmd, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	var err error
	switch {
	case line == "":
	case !strings.HasPrefix(line, "/"):
		err = k.say(c, line)
	case cmd == "/quit":
		k.bye(c, "* bye", actor.Normal)
	case cmd == "/join" && validName(arg):
		err = k.join(c, arg)
	case cmd == "/nick" && validName(arg):
		var nick string
		if nick, err = k.call(c, setNick{arg}); err == nil {
			k.nick = nick
		}
	case cmd == "/rooms" && arg == "":
		err = k.show(c, listRooms{})
	case cmd == "/who" && arg == "":
		err = k.show(c, who{})
	case cmd == "/topic" && arg != "":
		if k.srv.IsZero() {
			err = errUnavailable
		} else {
			actor.Cast(c, k.srv, setTopic{c.Self(), arg})
		}
	default:
		k.write(c, "ERR unknown command or bad argument: "+line)
	}
	if err != nil {
		k.write(c, "ERR "+err.Error())
	}
}

// say sends a line to every member of the room, this client included.
func (k *conn) say(c *actor.Context, text string) error {
	if k.room == "" {
		return errNoRoom
	}
	line := out(fmt.Sprintf("<%s> %s", k.nick, text))
	for _, p := range c.System().GroupMembers(group(k.room)) {
		c.Send(p, line)
	}
	return nil
}

func (k *conn) join(c *actor.Context, room string) error {
	if room == k.room {
		return nil
	}
	sys, self := c.System(), c.Self()
	if err := sys.JoinGroup(group(room), self); err != nil {
		return err
	}
	if _, err := k.call(c, joinRoom{room}); err != nil {
		sys.LeaveGroup(group(room), self)
		return err
	}
	if k.room != "" {
		sys.LeaveGroup(group(k.room), self)
	}
	k.room = room
	return nil
}

func (k *conn) call(c *actor.Context, req any) (string, error) {
	if k.srv.IsZero() {
		return "", errUnavailable
	}
	s, err := actor.Call[string](c, k.srv, req, callTimeout)
	if errors.Is(err, actor.ErrNoProc) || errors.Is(err, actor.ErrTimeout) {
		return "", errUnavailable
	}
	return s, err
}

// show writes the rooms server's answer to req.
func (k *conn) show(c *actor.Context, req any) error {
	s, err := k.call(c, req)
	if err == nil {
		k.write(c, s)
	}
	return err
}

func (k *conn) write(c *actor.Context, line string) {
	if k.cn.Send([]byte(line+"\n")) != nil { // the peer is gone or too slow
		k.leaving = true
		c.Stop(actor.Normal)
	}
}

// bye writes a last line and stops with reason once it is out.
func (k *conn) bye(c *actor.Context, line string, reason actor.Reason) {
	k.write(c, line)
	if k.leaving { // the write failed
		return
	}
	k.leaving, k.reason = true, reason
	if k.cn.Pending() == 0 {
		c.Stop(reason)
		return
	}
	c.SendAfter(c.Self(), forceStop{}, byeTimeout)
}

// The listener.

type addrReq struct{}

type listener struct {
	actor.ServerBase
	addr string
	l    *netio.Listener
}

func (s *listener) Init(c *actor.Context) error {
	l, err := netio.Listen(c.System(), c.Self(), s.addr)
	if err != nil {
		return err
	}
	s.l = l
	return l.SetActive(netio.Once)
}

func (s *listener) HandleCall(c *actor.Context, req actor.Request) {
	if _, ok := req.Msg.(addrReq); ok {
		c.Reply(req, s.l.Addr().String())
		return
	}
	s.ServerBase.HandleCall(c, req)
}

func (s *listener) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Accepted:
		s.serve(c, m.Conn)
		if err := s.l.SetActive(netio.Once); err != nil {
			c.Stop(err)
		}
	case netio.Error: // accept failed: crash, the supervisor restarts us
		c.Stop(m.Err)
	}
}

// serve starts a connection actor under conns and makes it cn's owner.
func (s *listener) serve(c *actor.Context, cn *netio.Conn) {
	sup, ok := c.System().Whereis(connsName)
	if !ok {
		cn.Close()
		return
	}
	pid, err := supervisor.StartChildArgs(c, sup, cn)
	if err == nil {
		if err = cn.ControllingProcess(c, pid); err != nil {
			supervisor.TerminateChildPid(c, sup, pid)
		}
	}
	if err != nil {
		c.System().Log("chat: connection from %v dropped: %v", cn.RemoteAddr(), err)
		cn.Close()
		return
	}
	cn.SetActive(netio.Once)
}

// server is a running chat: its System and its supervision tree.
type server struct {
	sys  *actor.System
	sup  actor.Pid
	addr string // the listener's address, with the port it got
	down chan struct{}
}

// start runs a chat server on addr that kicks clients idle for idle.
func start(addr string, idle time.Duration, logf func(string, ...any)) (*server, error) {
	sys, err := actor.Start(actor.Config{Logger: logf})
	if err != nil {
		return nil, err
	}
	newListener := func(...any) actor.Server { return &listener{addr: addr} }
	newConn := func(args ...any) actor.Server { return &conn{cn: args[0].(*netio.Conn), idle: idle} }
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy:  supervisor.OneForOne,
		Intensity: 5,
		Period:    10 * time.Second,
		Children: []supervisor.ChildSpec{ // started in order, stopped in reverse
			{ID: "rooms", Start: supervisor.ServerStart(newRooms, actor.WithSpawn(actor.Name(roomsName)))},
			supervisor.Child("conns", supervisor.Spec{
				Strategy: supervisor.SimpleOneForOne,
				Name:     connsName,
				Children: []supervisor.ChildSpec{{ID: "conn", Start: supervisor.ServerStart(newConn),
					Restart: supervisor.Temporary, Shutdown: 2 * byeTimeout}},
			}),
			{ID: "listener", Start: supervisor.ServerStart(newListener, actor.WithSpawn(actor.Name(listenerName)))},
		},
	})
	s := &server{sys: sys, sup: sup, down: make(chan struct{})}
	if err == nil {
		lp, _ := sys.Whereis(listenerName) // up: Start returns once all children are
		s.addr, err = actor.Call[string](sys, lp, addrReq{}, callTimeout)
	}
	if err == nil {
		err = s.watch()
	}
	if err != nil {
		s.stop(time.Second)
		return nil, err
	}
	return s, nil
}

// watch closes s.down when the top supervisor dies (it gave up). A System
// cannot monitor from outside, so a small actor does it.
func (s *server) watch() error {
	pid, err := s.sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch msg.(type) {
		case actor.Pid:
			c.Monitor(s.sup)
		case actor.Down:
			close(s.down)
			c.Stop(actor.Normal)
		}
	}))
	if err != nil {
		return err
	}
	return s.sys.Send(pid, s.sup)
}

// stop shuts the tree down in order: the listener, then every connection
// (each tells its client), then rooms; Shutdown returns once the socket
// poller's goroutine and fds are gone too.
func (s *server) stop(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.sys.Shutdown(ctx)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	idle := flag.Duration("idle", 5*time.Minute, "disconnect clients silent for this long")
	flag.Parse()
	s, err := start(*addr, *idle, log.Printf)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("chat: listening on %s", s.addr)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	select {
	case <-ctx.Done():
	case <-s.down:
		log.Print("chat: supervisor gave up")
	}
	if err := s.stop(10 * time.Second); err != nil {
		log.Fatal(err)
	}
}
