package acceptor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
	"github.com/colonyrt/colony/io/acceptor"
	"github.com/colonyrt/colony/supervisor"
)

func newLine(inits chan<- actor.Pid) func() acceptor.Handler {
	return func() acceptor.Handler { return &lineHandler{inits: inits} }
}

// TestEchoManyClients: concurrent clients are each served by a connection
// actor of their own, and each connection's end is counted.
func TestEchoManyClients(t *testing.T) {
	sys, _ := startSys(t)
	l, err := acceptor.Start(sys, "127.0.0.1:0", newLine(nil), acceptor.Acceptors(4))
	if err != nil {
		t.Fatal(err)
	}
	const clients = 40
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	cs := make([]*client, clients)
	for i := range cs {
		cs[i] = dial(t, l)
	}
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				if got, want := c.do(fmt.Sprint(i, " ", j)), fmt.Sprint(i, " ", j); got != want {
					errs <- fmt.Sprintf("client %d: %q, want %q", i, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := l.Accepted(); n != clients {
		t.Errorf("Accepted %d, want %d", n, clients)
	}
	if n := l.Conns(); n != clients {
		t.Errorf("Conns %d, want %d", n, clients)
	}
	for _, c := range cs {
		c.close()
	}
	eventually(t, 10*time.Second, "every connection ended", func() bool { return l.Conns() == 0 })
}

// TestMaxConns: at the limit the listener asks the socket for nothing
// (demand 0), so a third client waits in the backlog, unaccepted, until
// one of the two served ends; then it is served.
func TestMaxConns(t *testing.T) {
	sys, _ := startSys(t)
	inits := make(chan actor.Pid, 10)
	l, err := acceptor.Start(sys, "127.0.0.1:0", newLine(inits), acceptor.Acceptors(3), acceptor.MaxConns(2))
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := dial(t, l), dial(t, l)
	recv(t, inits, "the first Init")
	recv(t, inits, "the second Init")
	settled := func() bool {
		d, r, h, err := acceptor.State(sys, l)
		return err == nil && d == 0 && r == 3 && h == 0
	}
	eventually(t, 5*time.Second, "the acceptors ready again, nothing asked of the socket", settled)
	c3 := dial(t, l)
	if _, err := c3.nc.Write([]byte("third\n")); err != nil {
		t.Fatal(err)
	}
	if d, _, _, _ := acceptor.State(sys, l); d != 0 || l.Accepted() != 2 || l.Conns() != 2 {
		t.Fatalf("at the limit: demand %d, accepted %d, conns %d", d, l.Accepted(), l.Conns())
	}
	if got := c2.do("two"); got != "two" {
		t.Fatalf("c2: %q", got)
	}
	c1.close()
	recv(t, inits, "the third Init, after the first ended")
	if got := c3.read(); got != "third" {
		t.Fatalf("c3: %q", got)
	}
	if n := l.Conns(); n != 2 {
		t.Errorf("Conns %d, want 2", n)
	}
}

// TestMaxConnsKilledHandler: a connection actor that is killed (no
// Terminate, no clean stop) still frees its place.
func TestMaxConnsKilledHandler(t *testing.T) {
	sys, _ := startSys(t)
	inits := make(chan actor.Pid, 10)
	l, err := acceptor.Start(sys, "127.0.0.1:0", newLine(inits), acceptor.MaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	c1 := dial(t, l)
	p1 := recv(t, inits, "the first Init")
	c2 := dial(t, l)
	c2.nc.Write([]byte("second\n"))
	sys.Exit(p1, actor.Kill)
	if got := c1.read(); !strings.HasPrefix(got, "read: ") {
		t.Errorf("c1 after its actor was killed: %q, want EOF", got)
	}
	recv(t, inits, "the second Init")
	if got := c2.read(); got != "second" {
		t.Fatalf("c2: %q", got)
	}
}

// TestHandlerCrashClosesOnlyItsConn: a panic in one connection's handler
// ends that connection (the client reads EOF), is reported, and leaves the
// other connections and the listener alone.
func TestHandlerCrashClosesOnlyItsConn(t *testing.T) {
	sys, logs := startSys(t)
	l, err := acceptor.Start(sys, "127.0.0.1:0", newLine(nil))
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := dial(t, l), dial(t, l)
	if got := c2.do("hello"); got != "hello" {
		t.Fatalf("c2: %q", got)
	}
	if got := c1.do("panic"); !strings.HasPrefix(got, "read: ") {
		t.Fatalf("c1 after its handler panicked: %q, want EOF", got)
	}
	if got := c2.do("still here"); got != "still here" {
		t.Fatalf("c2 after c1's crash: %q", got)
	}
	if got := dial(t, l).do("new"); got != "new" {
		t.Fatalf("a new client after the crash: %q", got)
	}
	eventually(t, 5*time.Second, "the crash reported", func() bool { return len(logs.Matching("asked to")) > 0 })
	eventually(t, 5*time.Second, "the crashed connection uncounted", func() bool { return l.Conns() == 2 })
}

// TestAcceptorRestarted: a killed acceptor is restarted by its supervisor,
// and connections are served on.
func TestAcceptorRestarted(t *testing.T) {
	sys, _ := startSys(t)
	l, err := acceptor.Start(sys, "127.0.0.1:0", newLine(nil), acceptor.Acceptors(2))
	if err != nil {
		t.Fatal(err)
	}
	_, _, accs := acceptor.Parts(l)
	before, err := supervisor.WhichChildren(sys, accs)
	if err != nil || len(before) != 2 {
		t.Fatalf("acceptors: %v, %v", before, err)
	}
	for round := range 3 {
		victim := before[round%2]
		sys.Exit(victim.Pid, actor.Kill)
		eventually(t, 5*time.Second, "the acceptor restarted", func() bool {
			now, err := supervisor.WhichChildren(sys, accs)
			return err == nil && len(now) == 2 && now[round%2].Pid != victim.Pid && !now[round%2].Pid.IsZero()
		})
		before, _ = supervisor.WhichChildren(sys, accs)
		for i := range 5 {
			if got := dial(t, l).do(fmt.Sprint("r", round, i)); got != fmt.Sprint("r", round, i) {
				t.Fatalf("round %d client %d: %q", round, i, got)
			}
		}
	}
}

// TestListenerRestartedSamePort: a killed listener actor is restarted on
// the port it first got (the address asked for port 0), with fresh
// acceptors; the connections already handed over live on.
func TestListenerRestartedSamePort(t *testing.T) {
	sys, _ := startSys(t)
	l, err := acceptor.Start(sys, "127.0.0.1:0", newLine(nil), acceptor.Acceptors(2))
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().Port
	c1 := dial(t, l)
	if got := c1.do("before"); got != "before" {
		t.Fatal(got)
	}
	ls, _, _ := acceptor.Parts(l)
	sys.Exit(ls, actor.Kill)
	eventually(t, 5*time.Second, "the listener restarted", func() bool {
		now, _, _ := acceptor.Parts(l)
		a := l.Addr()
		return !now.IsZero() && now != ls && a != nil
	})
	if p := l.Addr().Port; p != port {
		t.Fatalf("restarted on port %d, was %d", p, port)
	}
	if got := c1.do("after"); got != "after" {
		t.Fatalf("the old connection after the restart: %q", got)
	}
	eventually(t, 5*time.Second, "a new client served", func() bool {
		c := dial(t, l)
		defer c.close()
		return c.do("new") == "new"
	})
}

// TestHandlerInitRefuses: an Init error closes the connection without a
// Terminate and is reported; ErrIgnore closes it quietly.
func TestHandlerInitRefuses(t *testing.T) {
	sys, logs := startSys(t)
	ends := make(chan actor.Reason, 4)
	for _, initErr := range []error{errors.New("refused by the test"), actor.ErrIgnore} {
		l, err := acceptor.Start(sys, "127.0.0.1:0", func() acceptor.Handler {
			return &lineHandler{initErr: initErr, ends: ends}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := dial(t, l).do("hi"); !strings.HasPrefix(got, "read: ") {
			t.Errorf("%v: client read %q, want EOF", initErr, got)
		}
		eventually(t, 5*time.Second, "the refused connection uncounted", func() bool { return l.Conns() == 0 })
		if err := l.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(ends) != 0 {
		t.Errorf("Terminate ran after a failed Init: %v", <-ends)
	}
	if len(logs.Matching("refused by the test")) == 0 {
		t.Errorf("the Init error was not reported: %q", logs.All())
	}
}

// TestNilHandler: a newHandler that returns nil (or a typed nil) drops the
// connection with ErrNilHandler, reported; the listener runs on.
func TestNilHandler(t *testing.T) {
	sys, logs := startSys(t)
	for _, h := range []acceptor.Handler{nil, (*lineHandler)(nil)} {
		l, err := acceptor.Start(sys, "127.0.0.1:0", func() acceptor.Handler { return h })
		if err != nil {
			t.Fatal(err)
		}
		if got := dial(t, l).do("hi"); !strings.HasPrefix(got, "read: ") {
			t.Errorf("client read %q, want EOF", got)
		}
		eventually(t, 5*time.Second, "the dropped connection uncounted", func() bool { return l.Conns() == 0 })
		l.Stop(context.Background())
	}
	if len(logs.Matching(acceptor.ErrNilHandler.Error())) == 0 {
		t.Errorf("ErrNilHandler not reported: %q", logs.All())
	}
}

// TestActiveOption: Active(Once) arms the socket after Init.
func TestActiveOption(t *testing.T) {
	sys, _ := startSys(t)
	l, err := acceptor.Start(sys, "127.0.0.1:0", func() acceptor.Handler { return &lineHandler{noArm: true} },
		acceptor.Active(netio.Once))
	if err != nil {
		t.Fatal(err)
	}
	if got := dial(t, l).do("armed"); got != "armed" {
		t.Fatalf("%q", got)
	}
}

// TestStopRunsTerminate: Stop stops the connection actors by their
// shutdown protocol (a trapping Handler's Terminate writes its last line,
// which is not lost), returns once the tree is gone, and is idempotent.
func TestStopRunsTerminate(t *testing.T) {
	sys, _ := startSys(t)
	ends := make(chan actor.Reason, 1)
	l, err := acceptor.Start(sys, "127.0.0.1:0", func() acceptor.Handler { return &lineHandler{trap: true, ends: ends} },
		acceptor.ConnShutdown(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	c := dial(t, l)
	if got := c.do("hi"); got != "hi" {
		t.Fatal(got)
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, ends, "Terminate"); r != actor.Shutdown {
		t.Errorf("Terminate's reason %v", r)
	}
	if got := c.read(); got != "shutting down" {
		t.Errorf("the last line: %q", got)
	}
	if got := c.read(); !strings.HasPrefix(got, "read: ") {
		t.Errorf("after the last line: %q, want EOF", got)
	}
	if l.Addr() != nil || l.Conns() != 0 {
		t.Errorf("after Stop: addr %v, conns %d", l.Addr(), l.Conns())
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	l2, err := acceptor.Start(sys, addr, newLine(nil)) // the port is free again
	if err != nil {
		t.Fatal(err)
	}
	if got := dial(t, l2).do("again"); got != "again" {
		t.Fatal(got)
	}
}

// TestEmbedded: ChildSpec runs the Listener in a service's tree; Stop is
// then ErrEmbedded, and a second tree may not run it at once.
func TestEmbedded(t *testing.T) {
	sys, _ := startSys(t)
	l, err := acceptor.New("127.0.0.1:0", newLine(nil), acceptor.ConnsName("test.conns"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Addr() != nil {
		t.Fatal("Addr before the start")
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{l.ChildSpec("listener")}})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, l)
	if got := c.do("embedded"); got != "embedded" {
		t.Fatal(got)
	}
	conns, ok := sys.Whereis("test.conns")
	if n, err := supervisor.CountChildren(sys, conns); !ok || err != nil || n.Active != 1 {
		t.Errorf("conns supervisor: %v %+v %v", ok, n, err)
	}
	if err := l.Stop(context.Background()); !errors.Is(err, acceptor.ErrEmbedded) {
		t.Errorf("Stop of an embedded listener: %v", err)
	}
	if _, err := supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{l.ChildSpec("again")}}); !errors.Is(err, acceptor.ErrRunning) {
		t.Errorf("a second tree: %v, want ErrRunning", err)
	}
	if err := supervisor.TerminateChild(sys, sup, "listener"); err != nil {
		t.Fatal(err)
	}
	if l.Addr() != nil {
		t.Errorf("Addr after the child stopped: %v", l.Addr())
	}
	if _, err := supervisor.RestartChild(sys, sup, "listener"); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if got := dial(t, l).do("restarted"); got != "restarted" {
		t.Fatal(got)
	}
}

// TestBadOptions: each bad argument is ErrBadOption, saying which, and
// starts nothing.
func TestBadOptions(t *testing.T) {
	h := newLine(nil)
	for name, opts := range map[string][]acceptor.Option{
		"zero acceptors":     {acceptor.Acceptors(0)},
		"too many acceptors": {acceptor.Acceptors(acceptor.MaxAcceptors + 1)},
		"zero max conns":     {acceptor.MaxConns(0)},
		"negative max conns": {acceptor.MaxConns(-1)},
		"zero shutdown":      {acceptor.ConnShutdown(0)},
		"negative shutdown":  {acceptor.ConnShutdown(-5)},
		"empty conns name":   {acceptor.ConnsName("")},
		"nil option":         {nil},
	} {
		if l, err := acceptor.New("127.0.0.1:0", h, opts...); !errors.Is(err, acceptor.ErrBadOption) || l != nil {
			t.Errorf("%s: %v, %v", name, l, err)
		}
	}
	if _, err := acceptor.New("127.0.0.1:0", nil); !errors.Is(err, acceptor.ErrBadOption) {
		t.Errorf("nil newHandler: %v", err)
	}
	if _, err := acceptor.Start(nil, "127.0.0.1:0", h); !errors.Is(err, actor.ErrNilSystem) {
		t.Errorf("nil System: %v", err)
	}
	if _, err := acceptor.New("127.0.0.1:0", h, acceptor.ConnShutdown(supervisor.BrutalKill), acceptor.ConnShutdown(actor.Infinity)); err != nil {
		t.Errorf("BrutalKill and Infinity: %v", err)
	}
}

// TestStartErrors: a bad address, an address in use and a stopped System
// are Start's errors, testable with errors.Is, and leave nothing running.
func TestStartErrors(t *testing.T) {
	sys, _ := startSys(t)
	h := newLine(nil)
	if _, err := acceptor.Start(sys, "not an address", h); !errors.Is(err, netio.ErrBadAddress) {
		t.Errorf("bad address: %v", err)
	}
	l, err := acceptor.Start(sys, "127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acceptor.Start(sys, l.Addr().String(), h); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("address in use: %v", err)
	}
	stopped, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	if err := stopped.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := acceptor.Start(stopped, "127.0.0.1:0", h); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("stopped System: %v", err)
	}
}

// TestStopAfterShutdown: a Listener whose System has shut down is stopped
// already.
func TestStopAfterShutdown(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := acceptor.Start(sys, "127.0.0.1:0", newLine(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Errorf("Stop after Shutdown: %v", err)
	}
	if l.Addr() != nil {
		t.Errorf("Addr after Shutdown: %v", l.Addr())
	}
}
