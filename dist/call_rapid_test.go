package dist_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"pgregory.net/rapid"
)

// delayServer answers {delay, Ms, Tag} with Tag after Ms milliseconds, from
// a timer message: a reply later than the call's timeout is late.
type delayServer struct{ actor.ServerBase }

type delayed struct {
	req actor.Request
	tag any
}

func (delayServer) HandleCall(c *actor.Context, req actor.Request) {
	t, ok := req.Msg.(etf.Tuple)
	if !ok || len(t) != 3 {
		c.ReplyError(req, actor.ErrUnhandled)
		return
	}
	ms, _ := t[1].(int)
	c.SendAfter(c.Self(), delayed{req, t[2]}, time.Duration(ms)*time.Millisecond)
}

func (delayServer) HandleInfo(c *actor.Context, msg any) {
	if d, ok := msg.(delayed); ok {
		c.Reply(d.req, d.tag)
	}
}

// Calls across nodes with random server delays and random timeouts, some
// sequential from one actor, some at once from goroutines: every call ends
// with its own reply or a timeout, never another call's reply; no stray
// message reaches the calling actor's mailbox; and every late reply is
// counted as dropped, not lost elsewhere.
func TestCallRandomDelaysAndTimeouts(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	if _, err := actor.StartServer(b.sys, delayServer{}, actor.WithSpawn(actor.Name("delay"))); err != nil {
		t.Fatal(err)
	}
	if err := a.Connect(ctxT(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	round := 0
	rapid.Check(t, func(rt *rapid.T) {
		round++
		type call struct{ delay, timeout int }
		calls := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) call {
			return call{rapid.IntRange(0, 15).Draw(rt, "delay"), rapid.IntRange(1, 15).Draw(rt, "timeout")}
		}), 1, 8).Draw(rt, "calls")
		type outcome struct {
			errs     []error
			timeouts int
			stray    []any
		}
		dropped := a.Stats().Dropped
		res := make(chan outcome, 1)
		a.sys.Spawn(initFunc(func(c *actor.Context) {
			var o outcome
			for i, cl := range calls {
				tag := fmt.Sprintf("r%d-%d", round, i)
				v, err := a.CallName(c, "delay", b.Name(), etf.Tuple{actor.Atom("delay"), cl.delay, tag}, time.Duration(cl.timeout)*time.Millisecond)
				switch {
				case err == nil && v != tag:
					err = fmt.Errorf("call %d got %#v, want %q", i, v, tag)
				case err != nil && !errors.Is(err, actor.ErrTimeout):
					err = fmt.Errorf("call %d: %w", i, err)
				case err != nil:
					o.timeouts++
					err = nil
				}
				o.errs = append(o.errs, err)
			}
			// Every late reply has come once a call made after them
			// is answered (the server answers in delay order, and the
			// longest delay is 15 ms).
			a.CallName(c, "delay", b.Name(), etf.Tuple{actor.Atom("delay"), 20, "fence"}, 5*time.Second)
			for {
				m, err := c.Receive(func(any) bool { return true }, 20*time.Millisecond)
				if err != nil {
					break
				}
				o.stray = append(o.stray, m)
			}
			res <- o
			c.Stop(actor.Normal)
		}))
		var o outcome
		select {
		case o = <-res:
		case <-time.After(30 * time.Second):
			rt.Fatalf("the caller did not finish")
		}
		for _, err := range o.errs {
			if err != nil {
				rt.Fatal(err)
			}
		}
		if len(o.stray) != 0 {
			rt.Fatalf("stray messages: %#v", o.stray)
		}
		if d := a.Stats().Dropped - dropped; d != uint64(o.timeouts) {
			rt.Fatalf("%d late replies dropped, want one per timeout: %d", d, o.timeouts)
		}
	})
}
