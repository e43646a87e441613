// Command chat is a small TCP chat server built on Colony.
//
// A one_for_one supervisor owns, in start order: rooms, a gen_server
// registered as "chat.rooms" that knows every client's nick and room, keeps
// the topics and announces comings and goings (it monitors every client);
// and the listener, an acceptor.Listener: the listening socket, its
// acceptors and conns, a supervisor of connection actors, one per TCP
// connection, each owning its socket in active once mode and kicking its
// client after an idle spell.
//
// A room is a process group of connection actors: a line is sent by its
// client's actor to every member, so lines from one sender arrive in order.
// Memberships die with their actors and outlive a crash of rooms, whose
// state is lost: the clients monitor it and register again (nick and room)
// once it is back; the topics are gone.
//
// Commands: /join ROOM, /nick NAME, /rooms, /topic TEXT, /quit;
// any other line is said in the current room.
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
	"github.com/colonyrt/colony/io/acceptor"
	"github.com/colonyrt/colony/supervisor"
)

const (
	roomsName   = "chat.rooms"
	connsName   = "chat.conns"
	callTimeout = time.Second
	retryEvery  = 20 * time.Millisecond // a client's next try to reach rooms
	byeTimeout  = time.Second           // a connection's stop: its last line and Terminate
	maxLine     = 4 << 10
	// A client's output queued beyond what the kernel took; a client that
	// falls further behind is dropped (the default, 16 MiB, is a lot).
	sendQueueLimit = 256 << 10
)

func group(room string) string { return "chat.room:" + room }

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,24}$`).MatchString

var (
	errUnavailable = errors.New("room service unavailable, try again")
	errNickTaken   = errors.New("nick taken")
	errNoRoom      = errors.New("/join a room first")
)

// Calls to rooms (answered with a string or an error), its cast, and a line
// for a connection actor's client.
type (
	hello     struct{ nick, room string } // register (again); answers the nick given
	setNick   struct{ nick string }
	joinRoom  struct{ room string }
	listRooms struct{}
	setTopic  struct {
		from  actor.Pid
		topic string
	}
	out string
)

// The rooms server.

type member struct {
	nick, room string
	ref        actor.Ref // the monitor of the client's actor
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
		if p, taken := r.nicks[q.nick]; q.nick == "" || taken && p != from {
			r.guests++
			q.nick = fmt.Sprint("guest", r.guests)
		}
		delete(r.nicks, m.nick)
		m.nick, m.room, r.nicks[q.nick] = q.nick, q.room, from
		c.Reply(req, q.nick)
		return
	}
	if m == nil {
		c.ReplyError(req, errUnavailable) // rooms restarted: it will register again
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
	case joinRoom: // the client joined the group; it leaves its old one after this
		if m.room != "" {
			r.tell(c, m.room, from, "* %s left #%s", m.nick, m.room)
		}
		m.room = q.room
		r.tell(c, q.room, actor.Pid{}, "* %s joined #%s", m.nick, q.room)
		if t := r.topics[q.room]; t != "" {
			c.Send(from, out(fmt.Sprintf("* topic of #%s: %s", q.room, t)))
		}
		c.Reply(req, "")
	case listRooms: // "* #a: nick nick (topic: t) | #b: nick", members sorted
		in := map[string][]string{}
		for _, o := range r.members {
			in[o.room] = append(in[o.room], o.nick)
		}
		delete(in, "") // not in a room yet
		var rs []string
		for room, nicks := range in {
			slices.Sort(nicks)
			if rs = append(rs, "#"+room+": "+strings.Join(nicks, " ")); r.topics[room] != "" {
				rs[len(rs)-1] += " (topic: " + r.topics[room] + ")"
			}
		}
		slices.Sort(rs)
		if rs == nil {
			rs = []string{"none"}
		}
		c.Reply(req, "* rooms: "+strings.Join(rs, " | "))
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
	d, ok := msg.(actor.Down) // a client's actor died: it left its group already
	if m := r.members[d.Pid]; ok && m != nil && m.ref == d.Ref {
		delete(r.members, d.Pid)
		delete(r.nicks, m.nick)
		if m.room != "" {
			r.tell(c, m.room, actor.Pid{}, "* %s left #%s (%s)", m.nick, m.room, why(d.Reason))
		}
	}
}

func why(reason actor.Reason) string {
	if s, ok := reason.(actor.ShutdownWith); ok {
		return fmt.Sprint(s.Reason) // kicked: idle, too slow
	}
	switch {
	case actor.IsNormal(reason):
		return "quit"
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

// A connection actor: owns its socket, registers with rooms.

type (
	register  struct{} // try to (re)register with rooms
	idleCheck int      // the idle timer armed as number n
)

type conn struct {
	actor.ServerBase
	cn         *netio.Conn
	idle       time.Duration
	buf        []byte
	nick, room string
	srv        actor.Pid // rooms, while registered with it
	srvRef     actor.Ref
	idleN      int
	idleT      actor.TimerRef
	gone       bool // stopping: say nothing more
}

// Init runs once the connection actor owns the socket (acceptor.Handler);
// acceptor.Active(netio.Once) arms the socket after it.
func (k *conn) Init(c *actor.Context, cn *netio.Conn) error {
	k.cn = cn
	c.TrapExit(true) // the supervisor's shutdown reaches Terminate: say goodbye
	if err := k.cn.SetSendQueueLimit(sendQueueLimit); err != nil {
		return err
	}
	k.armIdle(c)
	return c.Send(c.Self(), register{}) // not in Init: rooms may be restarting
}

func (k *conn) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case netio.Data:
		k.input(c, m.Bytes)
	case netio.Closed: // the peer closed (an Error, if any, came first)
		k.gone = true
		c.Stop(actor.Normal)
	case out:
		k.write(c, string(m))
	case register:
		k.register(c)
	case actor.Down: // rooms died: the supervisor restarts it
		if m.Ref == k.srvRef && !k.srv.IsZero() {
			k.srv = actor.Pid{}
			k.write(c, "* room service down, reconnecting")
			k.register(c)
		}
	case idleCheck:
		if int(m) == k.idleN { // not a timer cancelled too late
			k.bye(c, fmt.Sprint("* idle for ", k.idle, ", bye"), actor.ShutdownWith{Reason: "idle"})
		}
	}
}

func (k *conn) Terminate(c *actor.Context, reason actor.Reason) {
	if !k.gone && actor.IsShutdown(reason) {
		k.write(c, "* server shutting down") // written out after our death (linger)
	}
}

func (k *conn) register(c *actor.Context) {
	if pid, ok := c.System().Whereis(roomsName); ok {
		if ref, err := c.Monitor(pid); err == nil {
			nick, err := actor.Call[string](c, pid, hello{k.nick, k.room}, callTimeout)
			switch {
			case err != nil:
				c.Demonitor(ref, true)
			case k.nick == "":
				k.write(c, "* welcome, "+nick+": /join ROOM, /nick NAME, /rooms, /topic TEXT, /quit")
			default:
				k.write(c, "* room service is back, you are "+nick)
			}
			if err == nil {
				k.nick, k.srv, k.srvRef = nick, pid, ref
				return
			}
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
	for i := bytes.IndexByte(k.buf, '\n'); i >= 0 && !k.gone; i = bytes.IndexByte(k.buf, '\n') {
		line := strings.TrimSpace(string(k.buf[:i]))
		k.buf = k.buf[i+1:]
		k.command(c, line)
	}
	switch {
	case k.gone:
	case len(k.buf) > maxLine:
		k.bye(c, "ERR line too long", actor.Normal)
	default:
		k.cn.SetActive(netio.Once) // only now: a client cannot flood us
	}
}

func (k *conn) command(c *actor.Context, line string) {
	cmd, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	var s string
	var err error
	switch {
	case line == "":
	case !strings.HasPrefix(line, "/"):
		err = k.say(c, line)
	case cmd == "/quit":
		k.bye(c, "* bye", actor.Normal)
	case cmd == "/join" && validName(arg) && arg != k.room:
		err = k.join(c, arg)
	case cmd == "/nick" && validName(arg):
		if s, err = k.call(c, setNick{arg}); err == nil {
			k.nick = s
		}
	case cmd == "/rooms" && arg == "":
		s, err = k.call(c, listRooms{})
		k.write(c, s)
	case cmd == "/topic" && arg != "" && !k.srv.IsZero():
		actor.Cast(c, k.srv, setTopic{c.Self(), arg})
	default:
		k.write(c, "ERR unknown command, bad argument or no room service: "+line)
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
	line := out("<" + k.nick + "> " + text)
	for _, p := range c.System().GroupMembers(group(k.room)) {
		c.Send(p, line)
	}
	return nil
}

// join joins the room's group before rooms announces it, so that a line
// said after the announcement reaches the newcomer, and leaves the old one.
func (k *conn) join(c *actor.Context, room string) error {
	sys, old := c.System(), k.room
	if err := sys.JoinGroup(group(room), c.Self()); err != nil {
		return err
	}
	_, err := k.call(c, joinRoom{room})
	if err != nil {
		old = room // undo
	} else {
		k.room = room
	}
	if old != "" {
		sys.LeaveGroup(group(old), c.Self())
	}
	return err
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

func (k *conn) write(c *actor.Context, line string) {
	if line == "" || k.gone {
		return
	}
	if err := k.cn.Send([]byte(line + "\n")); errors.Is(err, netio.ErrBackpressure) {
		k.gone = true // the room talks faster than this client reads
		c.Stop(actor.ShutdownWith{Reason: "too slow"})
	} else if err != nil {
		k.gone = true // the peer is gone
		c.Stop(actor.Normal)
	}
}

// bye writes a last line and stops with reason. The line is not lost: our
// death closes the socket once its queued output has gone out (netio's
// linger).
func (k *conn) bye(c *actor.Context, line string, reason actor.Reason) {
	k.write(c, line)
	if !k.gone {
		k.gone = true
		c.Stop(reason)
	}
}

// server is a running chat: its System and its supervision tree.
type server struct {
	sys  *actor.System
	sup  actor.Pid
	addr string          // the listener's address, with the port it got
	down <-chan struct{} // closed when the top supervisor exits: it gave up (too many restarts)
}

// start runs a chat server on addr that kicks clients idle for idle.
func start(addr string, idle time.Duration, logf func(string, ...any)) (*server, error) {
	l, err := acceptor.New(addr, func() acceptor.Handler { return &conn{idle: idle} },
		acceptor.Active(netio.Once), acceptor.ConnsName(connsName), acceptor.ConnShutdown(2*byeTimeout))
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
		Children: []supervisor.ChildSpec{ // started in order, stopped in reverse
			{ID: "rooms", Start: supervisor.ServerStart(newRooms, actor.WithSpawn(actor.Name(roomsName)))},
			l.ChildSpec("listener"), // the connections' supervisor is in it
		},
	})
	s := &server{sys: sys, sup: sup}
	var top *actor.Watch
	if err == nil { // a monitor from outside: main learns when the tree gives up
		top, err = sys.Monitor(sup)
	}
	if err == nil {
		s.down = top.Done()
		s.addr = l.Addr().String() // up: Start returns once all children are
	}
	if err != nil {
		s.stop(time.Second)
		return nil, err
	}
	return s, nil
}

// stop shuts the tree down in order: the listener, every connection (each
// tells its client), rooms; Shutdown returns once the socket poller's
// goroutine and fds are gone too.
func (s *server) stop(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.sys.Shutdown(ctx)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	idle := flag.Duration("idle", 5*time.Minute, "disconnect clients silent this long")
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
