package dist_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// kvServer is the callee of the call tests: a Server whose requests are
// terms, as a peer (Colony or Erlang) sends them.
//
//	ping             -> pong
//	self             -> its pid
//	{echo, X}        -> X
//	fail             -> ReplyError
//	hold             -> kept; answered {released, N} by the cast release
//	die              -> stops with reason boom, unanswered
//	{die, R}         -> stops with reason R, unanswered
//	casts: {put, X}  -> kept, answered by the call last_cast
type kvServer struct {
	actor.ServerBase
	heldCh   chan struct{} // if set, told of each held call
	held     []actor.Request
	lastCast any
	released int
}

var (
	atomPing     = actor.Atom("ping")
	atomPong     = actor.Atom("pong")
	atomSelf     = actor.Atom("self")
	atomEcho     = actor.Atom("echo")
	atomFail     = actor.Atom("fail")
	atomHold     = actor.Atom("hold")
	atomDie      = actor.Atom("die")
	atomRelease  = actor.Atom("release")
	atomLastCast = actor.Atom("last_cast")
	atomReleased = actor.Atom("released")
	atomBoom     = actor.Atom("boom")
)

var errKV = errors.New("kv: failed on purpose")

func (s *kvServer) HandleCall(c *actor.Context, req actor.Request) {
	switch m := req.Msg.(type) {
	case actor.Atom:
		switch m {
		case atomPing:
			c.Reply(req, atomPong)
		case atomSelf:
			c.Reply(req, c.Self())
		case atomFail:
			c.ReplyError(req, errKV)
		case atomHold:
			s.held = append(s.held, req)
			if s.heldCh != nil {
				s.heldCh <- struct{}{}
			}
		case atomDie:
			c.Stop(atomBoom)
		case atomLastCast:
			c.Reply(req, s.lastCast)
		default:
			c.ReplyError(req, actor.ErrUnhandled)
		}
	case etf.Tuple:
		if len(m) == 2 && m[0] == atomEcho {
			c.Reply(req, m[1])
			return
		}
		if len(m) == 2 && m[0] == atomDie {
			c.Stop(local(m[1])) // {shutdown, R} as ShutdownWith, as the node maps it
			return
		}
		c.ReplyError(req, actor.ErrUnhandled)
	default:
		c.ReplyError(req, actor.ErrUnhandled)
	}
}

func (s *kvServer) HandleCast(c *actor.Context, msg any) {
	if msg == atomRelease {
		for _, r := range s.held {
			s.released++
			c.Reply(r, etf.Tuple{atomReleased, s.released})
		}
		s.held = nil
		return
	}
	s.lastCast = msg
}

func startKV(t *testing.T, sys *actor.System, name string) (actor.Pid, chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 16)
	pid, err := actor.StartServer(sys, &kvServer{heldCh: ch}, actor.WithSpawn(actor.Name(name)))
	if err != nil {
		t.Fatal(err)
	}
	return pid, ch
}

// A call across two Colony nodes, by name and by pid, from a goroutine and
// from a handler: replies, a deferred reply, an error reply, casts.
func TestCallColonyToColony(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	_, heldCh := startKV(t, b.sys, "kv")

	v, err := a.CallName(a.sys, "kv", b.Name(), atomPing, 10*time.Second)
	if err != nil || v != atomPong {
		t.Fatalf("CallName ping = %v, %v", v, err)
	}
	v, err = a.CallName(a.sys, "kv", b.Name(), atomSelf, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	kv, ok := v.(actor.Pid)
	if !ok || !kv.IsRemote() {
		t.Fatalf("self = %#v", v)
	}

	// By pid, through System.Call and Call[T] (the actor's own call path).
	if got, err := actor.Call[string](a.sys, kv, etf.Tuple{atomEcho, "hello"}, 10*time.Second); err != nil || got != "hello" {
		t.Fatalf("Call echo = %q, %v", got, err)
	}
	if _, err := a.sys.Call(kv, atomFail, 10*time.Second); err != nil {
		t.Fatalf("an error reply is a value across nodes: %v", err)
	}
	v, _ = a.sys.Call(kv, atomFail, 10*time.Second)
	if tu, ok := v.(etf.Tuple); !ok || len(tu) != 2 || tu[0] != actor.Atom("error") || tu[1] != errKV.Error() {
		t.Fatalf("ReplyError arrives as {error, Text}: %#v", v)
	}
	if got, err := actor.CallContext[actor.Atom](ctxT(t, 10*time.Second), a.sys, kv, atomPing); err != nil || got != atomPong {
		t.Fatalf("CallContext = %v, %v", got, err)
	}

	// From a handler: Context.Call of the remote pid.
	res := make(chan any, 1)
	a.sys.Spawn(initFunc(func(c *actor.Context) {
		v, err := c.Call(kv, etf.Tuple{atomEcho, 42}, 10*time.Second)
		if err != nil {
			res <- err
			return
		}
		res <- v
	}))
	if v := recvAny(t, res); v != 42 {
		t.Fatalf("Context.Call = %#v", v)
	}

	// A deferred reply: held, then released by a cast.
	held := make(chan any, 1)
	go func() {
		v, err := a.CallName(a.sys, "kv", b.Name(), atomHold, 10*time.Second)
		if err != nil {
			held <- err
			return
		}
		held <- v
	}()
	recvStruct(t, heldCh)
	if err := a.CastName(actor.Pid{}, "kv", b.Name(), atomRelease); err != nil {
		t.Fatal(err)
	}
	if v := recvAny(t, held); !tupleIs(v, atomReleased, 1) {
		t.Fatalf("deferred reply = %#v", v)
	}

	// Casts by pid (actor.Cast) and by name.
	if err := actor.Cast(a.sys, kv, etf.Tuple{actor.Atom("put"), 7}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the cast by pid", func() bool {
		v, _ := a.sys.Call(kv, atomLastCast, 10*time.Second)
		return tupleIs(v, actor.Atom("put"), 7)
	})
	a.CastName(actor.Pid{}, "kv", b.Name(), etf.Tuple{actor.Atom("put"), 8})
	eventually(t, 10*time.Second, "the cast by name", func() bool {
		v, _ := a.sys.Call(kv, atomLastCast, 10*time.Second)
		return tupleIs(v, actor.Atom("put"), 8)
	})
}

// initFunc is an actor that runs f in its Init.
type initFunc func(c *actor.Context)

func (f initFunc) Init(c *actor.Context)       { f(c) }
func (f initFunc) Receive(*actor.Context, any) {}

func recvStruct(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no signal within 10s")
	}
}

func recvAny(t *testing.T, ch <-chan any) any {
	t.Helper()
	return recv(t, ch, 10*time.Second)
}

func tupleIs(v any, tag actor.Atom, x any) bool {
	tu, ok := v.(etf.Tuple)
	return ok && len(tu) == 2 && tu[0] == tag && tu[1] == x
}

// A call that times out leaves nothing behind: the late reply is dropped
// (no stray message in the caller's mailbox), and the next call works.
func TestCallTimeoutNoStrayReply(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	_, heldCh := startKV(t, b.sys, "kv")

	type result struct {
		err   error
		stray []any
	}
	res := make(chan result, 1)
	release := make(chan struct{})
	a.sys.Spawn(initFunc(func(c *actor.Context) {
		_, err := a.CallName(c, "kv", b.Name(), atomHold, 100*time.Millisecond)
		close(release)
		// The reply comes after the timeout: wait for the server to
		// answer (a ping behind the release is answered after it), then
		// look for anything in the mailbox.
		if _, perr := a.CallName(c, "kv", b.Name(), atomPing, 10*time.Second); perr != nil {
			res <- result{err: perr}
			return
		}
		var stray []any
		for {
			m, rerr := c.Receive(func(any) bool { return true }, 50*time.Millisecond)
			if rerr != nil {
				break
			}
			stray = append(stray, m)
		}
		res <- result{err: err, stray: stray}
	}))
	recvStruct(t, heldCh)
	select {
	case <-release:
	case <-time.After(10 * time.Second):
		t.Fatal("the held call did not time out")
	}
	dropped := a.Stats().Dropped
	if err := b.CastName(actor.Pid{}, "kv", b.Name(), atomRelease); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-res:
	case <-time.After(20 * time.Second):
		t.Fatal("no result")
	}
	if !errors.Is(r.err, actor.ErrTimeout) {
		t.Fatalf("held call: %v, want a timeout", r.err)
	}
	var te *actor.CallTimeoutError
	if !errors.As(r.err, &te) || te.After != 100*time.Millisecond {
		t.Errorf("timeout error %#v", r.err)
	}
	if len(r.stray) != 0 {
		t.Errorf("stray messages after the timeout: %#v", r.stray)
	}
	eventually(t, 10*time.Second, "the late reply counted as dropped", func() bool {
		return a.Stats().Dropped > dropped
	})
}

// Calls that cannot be answered fail as OTP's gen:call does: an unknown
// name is noproc at once, an unknown node nodedown, a callee that dies
// before it replies exits the call with its reason.
func TestCallFailures(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	startKV(t, b.sys, "kv")

	start := time.Now()
	_, err := a.CallName(a.sys, "nobody", b.Name(), atomPing, 10*time.Second)
	if !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("unknown name: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("unknown name took %v (it should fail at once)", d)
	}

	_, err = a.CallName(a.sys, "kv", "nosuchnode@127.0.0.1", atomPing, 10*time.Second)
	if !errors.Is(err, dist.ErrNoConnection) {
		t.Fatalf("unknown node: %v", err)
	}
	var nd *dist.NodeDownError
	if !errors.As(err, &nd) || nd.Node != "nosuchnode@127.0.0.1" {
		t.Errorf("unknown node error %#v", err)
	}

	// The callee dies before replying: the call exits with its reason.
	_, err = a.CallName(a.sys, "kv", b.Name(), atomDie, 10*time.Second)
	var ce *actor.CallExitError
	if !errors.As(err, &ce) || ce.Reason != atomBoom {
		t.Fatalf("callee death: %v", err)
	}
	if !errors.Is(err, actor.ErrNoProc) {
		t.Errorf("a callee's death is ErrNoProc to errors.Is: %v", err)
	}

	// A call to the dead pid: noproc.
	kv, _ := startKV(t, b.sys, "kv2")
	v, err := a.CallName(a.sys, "kv2", b.Name(), atomSelf, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	kvAtA := v.(actor.Pid)
	b.sys.Exit(kv, actor.Kill)
	eventually(t, 10*time.Second, "kv2 dead", func() bool { return !b.sys.Alive(kv) })
	if _, err := a.sys.Call(kvAtA, atomPing, 10*time.Second); !errors.Is(err, actor.ErrNoProc) {
		t.Fatalf("call of a dead remote pid: %v", err)
	}

	// The callee's node goes away while the call waits: nodedown.
	c := startNode(t, port, dist.Config{})
	_, held := startKV(t, c.sys, "kv")
	errc := make(chan error, 1)
	go func() {
		_, err := a.CallName(a.sys, "kv", c.Name(), atomHold, 20*time.Second)
		errc <- err
	}()
	recvStruct(t, held)
	a.Disconnect(c.Name())
	select {
	case err := <-errc:
		if !errors.Is(err, dist.ErrNoConnection) {
			t.Fatalf("call over a lost connection: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call over a lost connection did not end")
	}
}

// A '$gen_call' or '$gen_cast' of the wrong shape is not a call: it is
// delivered as the message it is.
func TestMalformedGenCallIsAMessage(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	_, inbox := spawnCollector(t, b.sys, 8, actor.Name("sink"))
	genCall, genCast := actor.Atom("$gen_call"), actor.Atom("$gen_cast")
	for _, m := range []etf.Tuple{
		{genCall, actor.Atom("notafrom"), atomPing},
		{genCall, etf.Tuple{1, 2}, atomPing},
		{genCall, etf.Tuple{actor.Atom("x")}},
		{genCast, 1, 2},
	} {
		if err := a.SendName(actor.Pid{}, "sink", b.Name(), m); err != nil {
			t.Fatal(err)
		}
		got, ok := recv(t, inbox, 10*time.Second).(etf.Tuple)
		if !ok || len(got) != len(m) || got[0] != m[0] {
			t.Fatalf("sent %#v, got %#v", m, got)
		}
	}
}

// CallContext of a remote pid ends with its context: a deadline is a
// timeout (and context.DeadlineExceeded), a cancel is context.Canceled;
// the late reply is dropped.
func TestCallContextRemote(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	_, heldCh := startKV(t, b.sys, "kv")
	v, err := a.CallName(a.sys, "kv", b.Name(), atomSelf, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	kv := v.(actor.Pid)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := a.sys.CallContext(ctx, kv, atomHold); !errors.Is(err, actor.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	recvStruct(t, heldCh)

	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() {
		<-heldCh
		cancel2()
	}()
	if _, err := a.sys.CallContext(ctx2, kv, atomHold); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	dropped := a.Stats().Dropped
	a.CastName(actor.Pid{}, "kv", b.Name(), atomRelease)
	eventually(t, 10*time.Second, "both late replies dropped", func() bool { return a.Stats().Dropped >= dropped+2 })
}

// wire and local map reasons as package dist does.
func wire(r actor.Reason) any {
	if s, ok := r.(actor.ShutdownWith); ok {
		return etf.Tuple{actor.Shutdown, s.Reason}
	}
	return r
}

func local(v any) actor.Reason {
	if t, ok := v.(etf.Tuple); ok && len(t) == 2 && t[0] == actor.Shutdown {
		return actor.ShutdownWith{Reason: t[1]}
	}
	return v
}
