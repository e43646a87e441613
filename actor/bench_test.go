package actor_test

import (
	"context"
	"testing"

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
