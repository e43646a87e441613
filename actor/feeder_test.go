package actor_test

import (
	"errors"
	"testing"

	"github.com/colonyrt/colony/actor"
)

// feedOne is a message that boxes without allocating (a pointer).
var feedOne = new(int)

// TestFeederStreamAllocatesNothing: a steady stream from a plain goroutine
// through a Feeder allocates nothing per message once the nodes have come
// round (mailbox's depot), where System.Send allocates a node each time.
func TestFeederStreamAllocatesNothing(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates on its own")
	}
	sys := start(t, actor.Config{Schedulers: 1})
	handled := make(chan struct{}, 1)
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if m == any(feedOne) {
			handled <- struct{}{}
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	roundTrip := func(send func(actor.Pid, any) error) func() {
		return func() {
			if err := send(pid, feedOne); err != nil {
				t.Fatal(err)
			}
			<-handled
		}
	}
	f := sys.NewFeeder()
	feed := roundTrip(f.Send)
	for range 4 << 10 { // the scheduler's cache fills and unloads; the Feeder refills
		feed()
	}
	// One run of many messages, counted whole: AllocsPerRun divides by
	// its runs with integer division, which would hide anything under one
	// allocation per message.
	const msgs = 4 << 10
	stream := func(send func()) func() {
		return func() {
			for range msgs {
				send()
			}
		}
	}
	got := testing.AllocsPerRun(1, stream(feed))
	plain := testing.AllocsPerRun(1, stream(roundTrip(sys.Send)))
	t.Logf("allocations per %d messages: Feeder %.0f, System.Send %.0f", msgs, got, plain)
	// A few are allowed: a magazine swap that found the depot busy falls
	// back to allocating, and a new empty magazine is one allocation.
	if got > 8 {
		t.Fatalf("a Feeder's steady stream made %.0f allocations in %d messages, want at most a few (System.Send: %.0f)", got, msgs, plain)
	}
	if plain < msgs {
		t.Fatalf("System.Send from outside made %.0f allocations in %d messages: the comparison no longer shows the node", plain, msgs)
	}
}

// TestFeederKeepsSendSemantics: a Feeder's Send, SendName and Deliver
// behave as System's, errors included, and keep one sender's order.
func TestFeederKeepsSendSemantics(t *testing.T) {
	sys := start(t, actor.Config{})
	got := make(chan int, 64)
	gate := make(chan struct{})
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if m == "gate" {
			<-gate
			return
		}
		got <- m.(int)
	}), actor.MailboxBound(4))
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Register("feeder-target", pid); err != nil {
		t.Fatal(err)
	}
	f := sys.NewFeeder()
	if err := f.Send(pid, "gate"); err != nil {
		t.Fatal(err)
	}
	// The handler holds the gate: the mailbox fills to its bound, and
	// then Send is refused while Deliver is not.
	sent := 0
	for ; sent < 4; sent++ {
		if err := f.Send(pid, sent); err != nil {
			break
		}
	}
	if err := f.Send(pid, 99); !errors.Is(err, actor.ErrMailboxFull) {
		t.Fatalf("Send past the bound: %v, want ErrMailboxFull", err)
	}
	if err := f.Deliver(pid, sent); err != nil {
		t.Fatalf("Deliver past the bound: %v, want it taken", err)
	}
	close(gate)
	for want := 0; want <= sent; want++ {
		if m := <-got; m != want {
			t.Fatalf("message %d arrived as %d: a Feeder's order is lost", want, m)
		}
	}
	if err := f.SendName("feeder-target", 1000); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m != 1000 {
		t.Fatalf("SendName delivered %d, want 1000", m)
	}
	want := sys.SendName("no-such-name", 1)
	if err := f.SendName("no-such-name", 1); err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("SendName to an unregistered name: %v, want System.SendName's %v", err, want)
	}
	if err := f.Send(actor.Pid{}, 1); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("Send to the zero Pid: %v, want ErrBadPid", err)
	}
	if err := f.Deliver(actor.Pid{}, 1); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("Deliver to the zero Pid: %v, want ErrBadPid", err)
	}
	var _ actor.Sender = f // Cast and CastName take it
}
