package statem_test

import (
	"context"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/statem"
)

// lockState is the door's state: a handler per state (state_functions).
type lockState string

const (
	locked lockState = "locked"
	open   lockState = "open"
)

// door is a code lock: buttons pressed while locked build the code; the
// right code opens the door, which locks itself again after a state
// timeout. A caller asking to be told when the door is locked is postponed
// while it is open and answered when it locks.
type door struct {
	code, entered string
	relock        time.Duration
}

func (d *door) Init(c *statem.Context[lockState]) (lockState, error) { return locked, nil }

func (d *door) States() map[lockState]statem.State[lockState] {
	return map[lockState]statem.State[lockState]{
		locked: {Enter: d.enterLocked, Handle: d.locked},
		open:   {Enter: d.enterOpen, Handle: d.open},
	}
}

func (d *door) enterLocked(c *statem.Context[lockState], old lockState) {
	fmt.Println("locked")
	d.entered = ""
}

func (d *door) locked(c *statem.Context[lockState], ev statem.Event) {
	switch {
	case ev.Type == statem.Cast:
		d.entered += ev.Msg.(string)
		if d.entered == d.code {
			c.NextState(open)
		}
	case ev.Type == statem.Call && ev.Msg == "when locked":
		c.Reply(ev.Req, "locked")
	}
}

func (d *door) enterOpen(c *statem.Context[lockState], old lockState) {
	fmt.Println("open")
	c.StateTimeout(d.relock, "relock")
}

func (d *door) open(c *statem.Context[lockState], ev statem.Event) {
	switch ev.Type {
	case statem.StateTimeout:
		fmt.Println("time is up:", ev.Msg)
		c.NextState(locked)
	case statem.Call, statem.Cast:
		c.Postpone() // handled once the door is locked again
	}
}

func (d *door) Terminate(*statem.Context[lockState], actor.Reason, lockState) {}

// ExampleFunctions runs the code lock: the right code opens the door, a
// call made while it is open is postponed, and the state timeout locks it
// again, which answers the call.
func ExampleFunctions() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	pid, _ := statem.Start(sys, statem.Functions(&door{code: "123", relock: 20 * time.Millisecond}))
	for _, b := range []string{"1", "2", "3"} {
		actor.Cast(sys, pid, b)
	}
	v, err := actor.Call[string](sys, pid, "when locked", time.Minute)
	fmt.Println("caller:", v, err)
	// Output:
	// locked
	// open
	// time is up: relock
	// locked
	// caller: locked <nil>
}

// link is a connection's state in handle_event_function mode: a struct,
// compared whole, so each attempt of a reconnect is a state of its own.
type link struct {
	phase   string // "connecting", "up"
	attempt int
}

// conn retries a connection: each attempt is a state with a state timeout;
// a named timeout (a heartbeat) runs across states; a cast that comes while
// it connects is postponed until it is up.
type conn struct{ failFirst int }

func (k *conn) Init(c *statem.Context[link]) (link, error) {
	c.StartTimeout(statem.NamedTimer("heartbeat"), time.Hour, "beat")
	return link{"connecting", 1}, nil
}

func (k *conn) Enter(c *statem.Context[link], old, st link) {
	if st.phase == "connecting" {
		c.StateTimeout(0, "attempt") // try at once, after queued events
	}
}

func (k *conn) HandleEvent(c *statem.Context[link], st link, ev statem.Event) {
	switch {
	case ev.Type == statem.StateTimeout && st.attempt <= k.failFirst:
		fmt.Println("attempt", st.attempt, "failed")
		c.NextState(link{"connecting", st.attempt + 1})
	case ev.Type == statem.StateTimeout:
		fmt.Println("attempt", st.attempt, "connected")
		c.NextState(link{"up", st.attempt})
	case ev.Type == statem.Cast && st.phase == "connecting":
		c.Postpone()
	case ev.Type == statem.Cast:
		fmt.Println("sent", ev.Msg)
	case ev.Type == statem.Call:
		c.CancelTimeout(statem.NamedTimer("heartbeat"))
		c.Reply(ev.Req, st)
		c.Stop(actor.Normal)
	}
}

func (k *conn) Terminate(c *statem.Context[link], r actor.Reason, st link) {
	fmt.Println("terminate", r, st.phase)
}

// ExampleMachine runs a connection that fails twice. Its attempts are zero
// state timeouts, which fire before the mailbox is read, so the casts find
// it up. The call stops it; the reply is sent before Terminate runs, as
// stop_and_reply's, so the last two lines may come in either order.
func ExampleMachine() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	pid, _ := statem.Start[link](sys, &conn{failFirst: 2})
	gone, _ := sys.Monitor(pid)
	actor.Cast(sys, pid, "hello")
	actor.Cast(sys, pid, "world")
	st, err := actor.Call[link](sys, pid, "close", time.Minute)
	fmt.Println("closed in", st, err)
	<-gone.Done() // Terminate has run
	// Unordered output:
	// attempt 1 failed
	// attempt 2 failed
	// attempt 3 connected
	// sent hello
	// sent world
	// closed in {up 3} <nil>
	// terminate normal up
}
