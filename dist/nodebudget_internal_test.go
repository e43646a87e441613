package dist

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

func budgetPid(t *testing.T, i int) actor.Pid {
	t.Helper()
	p, err := actor.RemotePid(actor.RemoteID{Node: actor.Atom(fmt.Sprintf("budget%d@h", i)), Creation: 1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The budget lets burst identities through at once, then rate a second,
// and pins what it let through for one to two windows, never more than
// burst a window.
func TestNodeBudgetBurstRateAndPins(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newNodeBudget(10, 2, actor.Pid{}, func() time.Time { return now })
	i := 0
	spend := func() error { i++; return b.spend(budgetPid(t, i)) }
	for k := 0; k < 10; k++ {
		if err := spend(); err != nil {
			t.Fatalf("identity %d of a burst of 10: %v", k+1, err)
		}
	}
	if err := spend(); !errors.Is(err, ErrNodeBudget) {
		t.Fatalf("the 11th at once: %v, want ErrNodeBudget", err)
	}
	now = now.Add(time.Second) // 2 more
	for k := 0; k < 2; k++ {
		if err := spend(); err != nil {
			t.Fatalf("refilled identity %d: %v", k+1, err)
		}
	}
	if err := spend(); !errors.Is(err, ErrNodeBudget) {
		t.Fatalf("past the rate: %v", err)
	}
	if len(b.pins) != 10 { // 12 let through, at most burst pinned a window
		t.Fatalf("%d pinned in one window, want 10", len(b.pins))
	}
	now = now.Add(time.Hour) // refills to the burst, not past it
	for k := 0; k < 10; k++ {
		if err := spend(); err != nil {
			t.Fatalf("after an hour, identity %d: %v", k+1, err)
		}
	}
	if err := spend(); !errors.Is(err, ErrNodeBudget) {
		t.Fatalf("an hour refilled past the burst: %v", err)
	}
	if len(b.pins) != 10 || len(b.old) != 10 {
		t.Fatalf("after a rotation: %d pinned, %d from the window before; want 10 and 10", len(b.pins), len(b.old))
	}
	now = now.Add(pinWindow)
	if err := spend(); err != nil {
		t.Fatal(err)
	}
	if len(b.pins) != 1 || len(b.old) != 10 {
		t.Fatalf("after a second rotation: %d pinned, %d old; want 1 and 10", len(b.pins), len(b.old))
	}
	// The first window's array is reused for the new pins: past them it
	// holds nothing, so the first window's identities can be reclaimed.
	for _, p := range b.pins[len(b.pins):cap(b.pins)] {
		if !p.IsZero() {
			t.Fatalf("%v, pinned two windows ago, is still held", p)
		}
	}
}
