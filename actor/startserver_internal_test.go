package actor

import (
	"errors"
	"testing"
	"time"
)

// initServer runs init as its Init.
type initServer struct {
	ServerBase
	init func(c *Context) error
}

func (s *initServer) Init(c *Context) error { return s.init(c) }

// TestStartServerAckBeatsDeadline: a server whose ack is there when
// StartServer looks at its expired deadline has started, and is returned.
// Both were ready in one select, which picked at random: half the time it
// killed a server that had started and reported a timeout.
func TestStartServerAckBeatsDeadline(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	hold := func(acked <-chan struct{}) {
		select {
		case <-acked:
		case <-time.After(5 * time.Second):
		}
	}
	testHookStartDeadline.Store(&hold)
	defer testHookStartDeadline.Store(nil)
	for i := 0; i < 20; i++ {
		srv := &initServer{init: func(c *Context) error { return c.Sleep(5 * time.Millisecond) }}
		pid, err := StartServer(sys, srv, InitTimeout(time.Millisecond))
		if err != nil {
			t.Fatalf("run %d: StartServer: %v; the ack had come when the deadline was looked at", i, err)
		}
		if !sys.Alive(pid) {
			t.Fatalf("run %d: the server returned is dead", i)
		}
		sys.Exit(pid, Kill)
	}
}

// TestStartServerDeathBeforeAckReason: a server that dies before its ack
// fails the start with its exit reason, as gen_server:start returns
// {error, Reason}; it was always "killed", whatever the reason.
func TestStartServerDeathBeforeAckReason(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	self := make(chan Pid, 1)
	release := make(chan struct{})
	defer close(release)
	srv := &initServer{init: func(c *Context) error {
		self <- c.Self()
		<-release // blocked outside the runtime until the test ends
		return nil
	}}
	go func() {
		select {
		case pid := <-self:
			sys.Exit(pid, Atom("boom"))
		case <-time.After(5 * time.Second):
		}
	}()
	_, err := StartServer(sys, srv, InitTimeout(5*time.Second))
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("StartServer: %v, want a *StartError", err)
	}
	if se.Reason != Atom("boom") {
		t.Fatalf("StartError reason %v, want boom (the server's exit reason)", se.Reason)
	}
}

// TestStartServerDeathBeatsDeadline: a server that has died (without an
// ack) when StartServer looks at its expired deadline fails the start with
// its exit reason, as proc_lib's sync_start, whose receive matches a DOWN
// already there before its after clause; both were ready in one select,
// which picked at random and half the time said timeout.
func TestStartServerDeathBeatsDeadline(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	self := make(chan Pid, 1)
	release := make(chan struct{})
	defer close(release)
	kill := func(<-chan struct{}) {
		select {
		case pid := <-self:
			sys.Exit(pid, Atom("boom")) // finalised here: the watch is done on return
		case <-time.After(5 * time.Second):
		}
	}
	testHookStartDeadline.Store(&kill)
	defer testHookStartDeadline.Store(nil)
	for i := 0; i < 20; i++ {
		srv := &initServer{init: func(c *Context) error {
			self <- c.Self()
			<-release // blocked outside the runtime until the test ends
			return nil
		}}
		_, err := StartServer(sys, srv, InitTimeout(time.Millisecond))
		var se *StartError
		if !errors.As(err, &se) || se.Reason != Atom("boom") {
			t.Fatalf("run %d: StartServer: %v; want a *StartError with the server's exit reason boom", i, err)
		}
	}
}
