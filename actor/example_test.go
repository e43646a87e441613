package actor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
)

// tally is the README's first actor: it adds the ints it is sent and
// answers calls with the total.
type tally struct{ n int }

func (s *tally) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case int:
		s.n += m
	case actor.Request: // a call: reply now (or keep m and reply later)
		c.Reply(m, s.n)
	}
}

// Example is the README's first actor, checked: a named tally, two sends
// and a typed call. Sends from one sender arrive in order, so the call sees
// both.
func Example() {
	sys, _ := actor.Start(actor.Config{}) // Schedulers: GOMAXPROCS
	defer sys.Shutdown(context.Background())

	pid, _ := sys.Spawn(&tally{}, actor.Name("counter"))
	sys.Send(pid, 2)
	sys.Send(pid, 3)
	n, err := actor.Call[int](sys, pid, "get", time.Second)
	fmt.Println(n, err)
	// Output: 5 <nil>
}

// ExampleContext_Info: an actor looks at itself, as process_info(self())
// does: the message being handled is not counted as queued, the ones behind
// it are.
func ExampleContext_Info() {
	sys, _ := actor.Start(actor.Config{Schedulers: 1})
	defer sys.Shutdown(context.Background())

	gate := make(chan struct{})
	out := make(chan string, 1)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if msg != "first" {
			return
		}
		<-gate // hold the first message until the rest are queued
		info, _ := c.Info()
		out <- fmt.Sprintf("%v queued behind it", info.MailboxLen)
	}))
	sys.Send(pid, "first")
	sys.Send(pid, "second")
	sys.Send(pid, "third")
	close(gate)
	fmt.Println(<-out)
	// Output: 2 queued behind it
}

// ExampleSystem_Deliver: a service whose own flow control bounds what it
// sends delivers past a mailbox bound that would refuse a plain Send.
func ExampleSystem_Deliver() {
	sys, _ := actor.Start(actor.Config{Schedulers: 1})
	defer sys.Shutdown(context.Background())

	gate := make(chan struct{})
	out := make(chan any, 2)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if msg == "busy" {
			<-gate
			return
		}
		out <- msg
	}), actor.MailboxBound(1))
	sys.Send(pid, "busy")
	// Fill the bound: one message queued behind "busy" once it is taken.
	fmt.Println(sys.Send(pid, "queued") != nil || sys.Send(pid, "refused") != nil)
	fmt.Println(sys.Deliver(pid, "delivered"))
	close(gate)
	for m := range out {
		if m == "delivered" {
			fmt.Println(m)
			break
		}
	}
	// Output:
	// true
	// <nil>
	// delivered
}

// ExampleCallExitError: a callee that dies before it replies fails the call
// with its exit reason, as OTP's caller exits with {Reason, _}; the error is
// also ErrNoProc to errors.Is.
func ExampleCallExitError() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if _, ok := msg.(actor.Request); ok {
			c.Stop("boom") // dies without replying
		}
	}))
	_, err := sys.Call(pid, "work", time.Second)
	var ce *actor.CallExitError
	fmt.Println(errors.As(err, &ce), ce.Reason, errors.Is(err, actor.ErrNoProc))
	// Output: true boom true
}

// ExampleContext_MonitorGroup: a directory actor keeps a live member list of
// the "workers" group: MonitorGroup's snapshot, then a GroupChange per join
// and per leave. A worker's death is a leave. The main goroutine waits for
// each line, so the joins and the death come in a known order.
func ExampleContext_MonitorGroup() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	names := map[actor.Pid]string{}
	w1, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	w2, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	names[w1], names[w2] = "w1", "w2"
	sys.JoinGroup("workers", w1)

	out := make(chan string)
	dir, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch m := msg.(type) {
		case string: // "start"
			_, members, _ := c.MonitorGroup("workers")
			out <- fmt.Sprint("members at start: ", len(members))
		case actor.GroupChange:
			verb := "left"
			if m.Joined {
				verb = "joined"
			}
			out <- fmt.Sprint(names[m.Pids[0]], " ", verb, " ", m.Group)
		}
	}))
	sys.Send(dir, "start")
	fmt.Println(<-out)
	sys.JoinGroup("workers", w2)
	fmt.Println(<-out)
	sys.Exit(w1, actor.Kill)
	fmt.Println(<-out)
	fmt.Println(sys.GroupMembers("workers")[0] == w2, sys.WhichGroups())
	// Output:
	// members at start: 1
	// w2 joined workers
	// w1 left workers
	// true [workers]
}

// ExampleContext_SendInterval: periodic work, as with timer:send_interval:
// an actor starts a tick to itself and stops it after three.
func ExampleContext_SendInterval() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())

	done := make(chan int)
	var tick actor.TimerRef
	n := 0
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		switch msg {
		case "start":
			tick, _ = c.SendInterval(c.Self(), "tick", 10*time.Millisecond)
		case "tick":
			if n++; n == 3 {
				c.CancelTimer(tick)
				done <- n
			}
		}
	}))
	sys.Send(pid, "start")
	fmt.Println(<-done, "ticks")
	// Output: 3 ticks
}
