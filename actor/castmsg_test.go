package actor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// urgentServer handles casts in order, except that before each piece of
// work it takes any "urgent" cast waiting, by selective receive.
type urgentServer struct {
	actor.ServerBase
	gate chan struct{}
	log  chan string
}

func (s *urgentServer) HandleCast(c *actor.Context, m any) {
	if m == "first" {
		<-s.gate // the rest queue up meanwhile
	}
	for {
		u, err := c.Receive(func(m any) bool { v, ok := actor.CastMsg(m); return ok && v == "urgent" }, 0)
		if err != nil {
			break
		}
		v, _ := actor.CastMsg(u)
		s.log <- fmt.Sprint(v)
	}
	s.log <- fmt.Sprint(m)
}

// TestCastMsgInSelectiveReceive: a Server matches its own casts in a
// selective receive with CastMsg (Erlang's {'$gen_cast', Msg}), which a
// Server could not do while the wrapper was unexported (examples/cron made
// its urgent commands calls instead).
func TestCastMsgInSelectiveReceive(t *testing.T) {
	sys := start(t, actor.Config{})
	s := &urgentServer{gate: make(chan struct{}), log: make(chan string, 8)}
	pid, err := actor.StartServer(sys, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"first", "work", "urgent"} {
		if err := actor.Cast(sys, pid, m); err != nil {
			t.Fatal(err)
		}
	}
	// All three are queued (Cast returned) before the gate opens.
	close(s.gate)
	var got []string
	for range 3 {
		select {
		case m := <-s.log:
			got = append(got, m)
		case <-time.After(5 * time.Second):
			t.Fatalf("handled %q only", got)
		}
	}
	if fmt.Sprint(got) != "[urgent first work]" {
		t.Fatalf("handled %q, want the urgent cast first", got)
	}
	if v, ok := actor.CastMsg("plain"); ok || v != nil {
		t.Fatalf("CastMsg of a plain message: %v, %v", v, ok)
	}
}
