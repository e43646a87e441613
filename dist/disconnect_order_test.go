package dist_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
)

// orderProbe monitors a remote actor and counts the ints that actor sends
// it, before and after the monitor's Down.
type orderProbe struct {
	first  chan struct{} // closed at the first int
	report chan [2]int   // [ints before the Down, ints after it]; -1 before: no Down
	down   bool
	before int
	after  int
}

type checkOrder struct{}

func (p *orderProbe) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Pid:
		if _, err := c.Monitor(m); err != nil {
			panic(err)
		}
	case int:
		if p.down {
			p.after++
			return
		}
		if p.before == 0 {
			close(p.first)
		}
		p.before++
	case actor.Down:
		p.down = true
	case checkOrder:
		b := p.before
		if !p.down {
			b = -1
		}
		p.report <- [2]int{b, p.after}
	}
}

// streamer sends a stream of ints to a pid, a batch an activation.
type streamer struct{ to actor.Pid }

func (s *streamer) Receive(c *actor.Context, msg any) {
	k, ok := msg.(int)
	if !ok || k >= 20 {
		return
	}
	for i := range 2000 { // a burst: the peer's reader holds many frames at once
		c.Send(s.to, k*2000+i)
	}
	c.Send(c.Self(), k+1)
}

// TestDisconnectDropsWhatFollowsTheDown: a monitored remote actor's
// messages never arrive after the Down its connection's loss caused.
// Disconnect used to fire the connection's signals at once, from its own
// goroutine, while the reader went on delivering the frames it still held:
// the probe got its Down{noconnection}, then more of the stream. Here the
// reader is held, mid-burst, until the connection is closing.
func TestDisconnectDropsWhatFollowsTheDown(t *testing.T) {
	for round := range 5 {
		a, b := connected(t)
		var armed atomic.Bool
		held, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		restore := dist.SetTestHookFrame(func(local actor.Atom) {
			if local == a.Name() && armed.Load() {
				once.Do(func() { close(held); <-release })
			}
		})
		probe := &orderProbe{first: make(chan struct{}), report: make(chan [2]int, 1)}
		rec, err := a.sys.Spawn(probe)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := b.sys.Spawn(&streamer{to: remoteOf(t, a, rec)})
		if err != nil {
			t.Fatal(err)
		}
		a.sys.Send(rec, remoteOf(t, b, sp))
		roundTrip(t, a, b) // the MONITOR_P has reached b
		b.sys.Send(sp, 0)
		select {
		case <-probe.first:
		case <-time.After(10 * time.Second):
			t.Fatal("no message of the stream arrived")
		}
		closing := dist.ClosingOf(a.Node, b.Name())
		if closing == nil {
			t.Fatal("not connected")
		}
		armed.Store(true)
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("the reader read no further frame")
		}
		disconnected := make(chan bool, 1)
		go func() { disconnected <- a.Disconnect(b.Name()) }()
		select {
		case <-closing:
		case <-time.After(10 * time.Second):
			t.Fatal("Disconnect did not close the connection")
		}
		close(release) // the reader goes on, with the rest of the burst in its buffer
		select {
		case ok := <-disconnected:
			if !ok {
				t.Fatal("Disconnect: not connected")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Disconnect did not return")
		}
		restore()
		// Disconnect has returned: the reader has stopped, so a local
		// message sent now comes after everything it delivered.
		a.sys.Send(rec, checkOrder{})
		var got [2]int
		select {
		case got = <-probe.report:
		case <-time.After(10 * time.Second):
			t.Fatal("the probe did not report")
		}
		if got[0] < 0 {
			t.Fatalf("round %d: no Down after Disconnect returned", round)
		}
		if got[1] != 0 {
			t.Fatalf("round %d: %d messages arrived after the Down (%d before it)", round, got[1], got[0])
		}
		t.Logf("round %d: %d messages before the Down, none after", round, got[0])
	}
}
