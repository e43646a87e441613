package timers_test

import (
	"fmt"

	"github.com/colonyrt/colony/timers"
)

// The timekeeper's loop: arm timers, sleep until NextExpiry, Advance.
// Times are milliseconds on the caller's clock; here a plain counter.
func Example() {
	w := timers.New[string](1000)

	w.Arm(1000+250, "send_after 250ms")
	reply := w.Arm(1000+5000, "call timeout")
	w.Arm(1000+40, "receive after 40ms")
	w.Arm(1000-1, "overdue: fires at the next Advance")

	// The reply came in time: cancel the call timeout. A second cancel
	// (or one after the timer fired) is a clean false.
	fmt.Println("cancel:", w.Cancel(reply), w.Cancel(reply))

	for w.Len() > 0 {
		next, _ := w.NextExpiry() // a lower bound: we may wake early, never late
		w.Advance(next, func(v string) {
			fmt.Printf("t=%d: %s\n", w.Now(), v)
		})
	}
	// Output:
	// cancel: true false
	// t=1000: overdue: fires at the next Advance
	// t=1040: receive after 40ms
	// t=1250: send_after 250ms
}

// Deadline supports Erlang's read_timer: the time left on a pending timer.
func ExampleWheel_Deadline() {
	w := timers.New[int](0)
	h := w.Arm(300, 42)
	w.Advance(100, func(int) {})
	if d, ok := w.Deadline(h); ok {
		fmt.Println("remaining:", max(0, d-w.Now()))
	}
	w.Advance(300, func(v int) { fmt.Println("fired", v) })
	_, ok := w.Deadline(h)
	fmt.Println("pending:", ok)
	// Output:
	// remaining: 200
	// fired 42
	// pending: false
}
