package actor

import (
	"errors"
	"testing"
	"time"
)

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
