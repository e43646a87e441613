package backoff_test

import (
	"context"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/backoff"
)

// The delays double from Min up to Max; a Success starts again from Min.
func ExampleBackoff() {
	b, err := backoff.New(100*time.Millisecond, time.Second)
	if err != nil {
		panic(err)
	}
	for range 6 {
		fmt.Print(b.Next(), " ")
	}
	b.Success()
	fmt.Println(b.Next())
	// Output: 100ms 200ms 400ms 800ms 1s 1s 100ms
}

// With Jitter, each delay is drawn from [base*(1-j), base].
func ExampleJitter() {
	b, _ := backoff.New(100*time.Millisecond, time.Second, backoff.Jitter(0.5))
	for range 4 {
		d := b.Next()
		fmt.Println(d >= 50*time.Millisecond && d <= time.Second)
	}
	// Output:
	// true
	// true
	// true
	// true
}

// A Success resets the count only once the connection has stayed up for
// the stable period.
func ExampleResetAfter() {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	b, _ := backoff.New(time.Second, time.Minute, backoff.ResetAfter(10*time.Second), backoff.Clock(clock))
	b.Next()
	b.Next()
	b.Success()
	now = now.Add(time.Second) // up for a second: not stable
	fmt.Println(b.Next())
	b.Success()
	now = now.Add(10 * time.Second) // up for ten: the count starts again
	fmt.Println(b.Next())
	// Output:
	// 4s
	// 1s
}

type (
	tryDial struct{}
)

// dialer retries a failing dial from its handler: the Backoff gives the
// delay, SendAfter arms the retry, and no goroutine waits.
type dialer struct {
	b     *backoff.Backoff
	fails int // the dial fails this many times before it works
	done  chan<- string
}

func (d *dialer) Receive(c *actor.Context, msg any) {
	switch msg.(type) {
	case tryDial:
		if d.fails > 0 {
			d.fails--
			delay := d.b.Next()
			d.done <- fmt.Sprint("dial failed, retry in ", delay)
			c.SendAfter(c.Self(), tryDial{}, delay)
			return
		}
		d.b.Success()
		d.done <- "connected"
		c.Stop(actor.Normal)
	}
}

// A reconnect loop inside an actor: Next after each failure, SendAfter to
// retry, Success once it works.
func Example_reconnect() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	b, _ := backoff.New(time.Millisecond, 10*time.Millisecond)
	done := make(chan string)
	pid, _ := sys.Spawn(&dialer{b: b, fails: 3, done: done})
	sys.Send(pid, tryDial{})
	for s := range done {
		fmt.Println(s)
		if s == "connected" {
			break
		}
	}
	// Output:
	// dial failed, retry in 1ms
	// dial failed, retry in 2ms
	// dial failed, retry in 4ms
	// connected
}
