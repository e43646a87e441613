package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

func BenchmarkPingPong(b *testing.B) {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	done := make(chan struct{})
	n := b.N
	var pong actor.Pid
	pong, _ = sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		c.Send(m.(actor.Pid), c.Self())
	}))
	ping, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if n == 0 {
			close(done)
			return
		}
		n--
		c.Send(pong, c.Self())
	}))
	b.ResetTimer()
	sys.Send(ping, pong)
	<-done
}

func BenchmarkPingPongGoroutines(b *testing.B) {
	a, c := make(chan int), make(chan int)
	go func() {
		for v := range a {
			c <- v
		}
		close(c)
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a <- i
		<-c
	}
	close(a)
}

type benchVal int

// BenchmarkSpawn is the bench suite's spawn workload: spawn from outside, one
// message, exit. Wait at the end, so every slot is reclaimed in the timing.
func BenchmarkSpawn(b *testing.B) {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	beh := actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pid, err := sys.Spawn(beh)
		if err != nil {
			b.Fatal(err)
		}
		sys.Send(pid, benchVal(i))
	}
	sys.Wait(context.Background())
}

// BenchmarkSpawnInside spawns from inside an actor: a parent spawns children
// that each send one message back and exit.
func BenchmarkSpawnInside(b *testing.B) {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	done := make(chan struct{})
	n := b.N
	child := actor.ActorFunc(func(c *actor.Context, m any) {
		c.Send(m.(actor.Pid), benchVal(0))
		c.Stop(actor.Normal)
	})
	got := 0
	parent, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch m.(type) {
		case string:
			for i := 0; i < n; i++ {
				pid, _ := c.Spawn(child)
				c.Send(pid, c.Self())
			}
		case benchVal:
			if got++; got == n {
				close(done)
			}
		}
	}))
	b.ResetTimer()
	sys.Send(parent, "go")
	<-done
}

// BenchmarkSend is many sends from outside the system to one actor.
func BenchmarkSendOutside(b *testing.B) { benchSendOutside(b, systemSend) }

// BenchmarkFeederOutside is BenchmarkSendOutside through a Feeder: the
// nodes come back to it through the depot, and a message allocates nothing.
func BenchmarkFeederOutside(b *testing.B) { benchSendOutside(b, feederSend) }

// BenchmarkFanOutOutside is the bench suite's fanout: one plain goroutine
// sends round robin to 1000 actors; one op is one message.
func BenchmarkFanOutOutside(b *testing.B) { benchFanOutOutside(b, systemSend) }

// BenchmarkFanOutFeeder is BenchmarkFanOutOutside through a Feeder.
func BenchmarkFanOutFeeder(b *testing.B) { benchFanOutOutside(b, feederSend) }

// outsideSender gives the sending function of one goroutine outside sys.
type outsideSender func(sys *actor.System) func(pid actor.Pid, msg any) error

func systemSend(sys *actor.System) func(actor.Pid, any) error { return sys.Send }
func feederSend(sys *actor.System) func(actor.Pid, any) error { return sys.NewFeeder().Send }

func benchSendOutside(b *testing.B, from outsideSender) {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	send := from(sys)
	done := make(chan struct{})
	n := b.N
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if n--; n == 0 {
			close(done)
		}
	}))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		send(pid, benchVal(i))
	}
	<-done
}

func benchFanOutOutside(b *testing.B, from outsideSender) {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	send := from(sys)
	const actors = 1000
	rounds := b.N/actors + 1
	done := make(chan struct{}, actors)
	pids := make([]actor.Pid, actors)
	for i := range pids {
		n := rounds
		pids[i], _ = sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
			if n--; n == 0 {
				done <- struct{}{}
			}
		}))
	}
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		for _, pid := range pids {
			send(pid, benchVal(r))
		}
	}
	for range actors {
		<-done
	}
}

// BenchmarkCall is a call round trip from one actor to another.
func BenchmarkCall(b *testing.B) {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	srv, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			c.Reply(r, r.Msg)
		}
	}))
	done := make(chan struct{})
	n := b.N
	cli, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		for i := 0; i < n; i++ {
			if _, err := c.Call(srv, i, actor.Infinity); err != nil {
				b.Error(err)
				break
			}
		}
		close(done)
	}))
	b.ResetTimer()
	sys.Send(cli, "go")
	<-done
}

// BenchmarkSystemCall is a call round trip from a plain goroutine.
func BenchmarkSystemCall(b *testing.B) {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	srv, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			c.Reply(r, r.Msg)
		}
	}))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := sys.Call(srv, i, actor.Infinity); err != nil {
			b.Fatal(err)
		}
	}
}

type skyStart struct {
	num, size int64
	parent    actor.Pid
}

type skyResult int64

type sky struct {
	parent  actor.Pid
	root    chan int64
	sum     int64
	replies int
}

func (a *sky) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case skyStart:
		a.parent = m.parent
		if m.size == 1 {
			a.reply(c, m.num)
			return
		}
		child := m.size / 10
		for i := int64(0); i < 10; i++ {
			pid, _ := c.Spawn(&sky{})
			c.Send(pid, skyStart{num: m.num + i*child, size: child, parent: c.Self()})
		}
	case skyResult:
		a.sum += int64(m)
		if a.replies++; a.replies == 10 {
			a.reply(c, a.sum)
		}
	}
}

func (a *sky) reply(c *actor.Context, v int64) {
	if a.root != nil {
		a.root <- v
	} else {
		c.Send(a.parent, skyResult(v))
	}
	c.Stop(actor.Normal)
}

// BenchmarkSkynet is the bench suite's skynet with 10^5 leaves; one op is
// one whole tree (111,111 actors).
func BenchmarkSkynet(b *testing.B) {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	for i := 0; i < b.N; i++ {
		done := make(chan int64, 1)
		root, _ := sys.Spawn(&sky{root: done})
		sys.Send(root, skyStart{size: 100000})
		if got := <-done; got != 4999950000 {
			b.Fatalf("sum %d", got)
		}
	}
}

// BenchmarkSendAfterCancel: SendAfter of a long timer to an idle actor and
// its CancelTimer, from outside: the cost of a timeout that is not needed
// (the armcancel workload's unit, with few timers pending).
func BenchmarkSendAfterCancel(b *testing.B) {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ref, err := sys.SendAfter(pid, i, 10*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if !sys.CancelTimer(ref) {
			b.Fatal("not pending")
		}
	}
}
