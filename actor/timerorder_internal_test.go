package actor

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestTimerExpiriesOfTwoTicksKeepDeadlineOrder: two SendAfter timers to one
// actor, due at different wheel ticks, arrive in deadline order even when
// two roles poll the wheel at once. A role firing the earlier tick's batch
// is held in testHookFiring while the other role, woken by unrelated work,
// polls after the later deadline has passed. The second poll used to take
// the later tick from the wheel and deliver it first (the batch is fired
// outside the wheel's lock).
func TestTimerExpiriesOfTwoTicksKeepDeadlineOrder(t *testing.T) {
	sys := startInternal(t, Config{Schedulers: 2})
	entered := make(chan struct{})
	release := make(chan struct{})
	var once atomic.Bool
	hold := func() {
		if once.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
	}
	testHookFiring.Store(&hold)
	defer testHookFiring.Store(nil)

	got := make(chan any, 2)
	rcv, err := sys.Spawn(ActorFunc(func(c *Context, m any) { got <- m }))
	if err != nil {
		t.Fatal(err)
	}
	busy, err := sys.Spawn(ActorFunc(func(c *Context, m any) {}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sys.SendAfter(rcv, 1, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.SendAfter(rcv, 2, 3*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no role fired the first timer")
	}
	// The first batch is held. Let the second deadline pass (a sleep
	// guarantees at least that much time has gone, however slow the
	// machine), then keep the other role busy so it polls the wheel.
	time.Sleep(5 * time.Millisecond)
	for i := 0; i < 200; i++ {
		sys.Send(busy, i)
		time.Sleep(50 * time.Microsecond)
	}
	close(release)
	var order []any
	for len(order) < 2 {
		select {
		case m := <-got:
			order = append(order, m)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %v, want both timers", order)
		}
	}
	if order[0] != 1 || order[1] != 2 {
		t.Fatalf("timer messages arrived as %v, want deadline order [1 2]", order)
	}
}
