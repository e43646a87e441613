package actor_test

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestSystemCallTimeout: a call from outside the system times out on the
// timing wheel (with every scheduler idle, so the timekeeper path is the one
// that fires it); the reply that comes after is dropped and counted, and the
// caller's recycled wake-up channel carries no stale wake into the next call.
func TestSystemCallTimeout(t *testing.T) {
	for _, n := range []int{1, 2} {
		sys := start(t, actor.Config{Schedulers: n})
		var held []actor.Request
		server := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
			switch m := m.(type) {
			case actor.Request:
				if m.Msg == "echo" {
					c.Reply(m, "echo")
					return
				}
				held = append(held, m) // answer later, too late
			case string: // "release"
				for _, r := range held {
					if c.Reply(r, "late") {
						t.Error("a reply after the timeout was taken")
					}
				}
				held = nil
			}
		}))
		for i := range 20 {
			t0 := time.Now()
			_, err := sys.Call(server, "hold", 20*time.Millisecond)
			el := time.Since(t0)
			if !errors.Is(err, actor.ErrTimeout) {
				t.Fatalf("schedulers %d round %d: %v, want ErrTimeout", n, i, err)
			}
			if el < 20*time.Millisecond || el > 5*time.Second {
				t.Fatalf("schedulers %d round %d: timed out after %v", n, i, el)
			}
			sys.Send(server, "release")
			v, err := sys.Call(server, "echo", 5*time.Second)
			if err != nil || v != "echo" {
				t.Fatalf("schedulers %d round %d: next call got %v, %v", n, i, v, err)
			}
		}
		if got := sys.Stats().LateReplies; got != 20 {
			t.Fatalf("schedulers %d: %d late replies counted, want 20", n, got)
		}
	}
}

// A System.Call whose callStart fails after its monitor is placed (here: the
// callee's bounded mailbox is full and the callee is killed meanwhile) must
// not put its pooled done channel back with the finaliser's token still in
// it: the next System.Call on that channel wakes at once and returns
// (nil, nil) before its reply.
func TestFailedCallStartKeepsDonePoolClean(t *testing.T) {
	sys := start(t, actor.Config{})
	echo, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if r, ok := m.(actor.Request); ok {
			c.Reply(r, "ok")
		}
	}))
	var bad atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40 && bad.Load() == 0; i++ {
				sleeping := make(chan struct{})
				victim, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
					close(sleeping)
					c.Sleep(time.Hour)
				}), actor.MailboxBound(1))
				sys.Send(victim, 1)
				<-sleeping
				// Full once 2 is queued. The victim records that it took 1
				// when it parks in Sleep (block.go, "Consumption is flushed
				// at block time"); until then 1 still fills the bound.
				for sys.Send(victim, 2) != nil {
					runtime.Gosched()
				}
				// The kill lands while the calls are under way: it is sent
				// after the first few refusals, from a goroutine of its own,
				// and the calls go on back to back until it has. (A killer
				// that first yielded i%64 times, beside four callers
				// retrying without pause, was starved for seconds under
				// -race.)
				killAt := i % 8
				for k := 0; ; k++ {
					if k == killAt {
						go sys.Exit(victim, actor.Kill)
					}
					_, err := sys.Call(victim, "x", time.Second)
					if !errors.Is(err, actor.ErrMailboxFull) {
						break
					}
				}
				v, err := sys.Call(echo, "q", 5*time.Second)
				if v != "ok" || err != nil {
					t.Errorf("iteration %d: call to echo: (%v, %v), want (ok, nil)", i, v, err)
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
}

type keepsSignal struct {
	keeps
	got chan struct{}
}

func (s *keepsSignal) HandleCall(c *actor.Context, r actor.Request) {
	s.kept = r
	s.got <- struct{}{}
}

// A call whose caller was killed while it waited has ended, as one that
// timed out has: a reply to it is late (Reply reports false and
// Stats.LateReplies counts it). It was taken, as if the dead caller would
// read it.
func TestReplyToKilledCallerIsLate(t *testing.T) {
	sys := start(t, actor.Config{})
	s := &keepsSignal{keeps: keeps{taken: make(chan bool, 1)}, got: make(chan struct{}, 1)}
	srv, err := actor.StartServer(sys, s)
	if err != nil {
		t.Fatal(err)
	}
	caller, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) {
		c.Call(srv, "q", actor.Infinity)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Send(caller, "go"); err != nil {
		t.Fatal(err)
	}
	recv(t, s.got) // the Request is held: the caller waits
	if err := sys.Exit(caller, actor.Kill); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "caller dead", func() bool { return !sys.Alive(caller) })
	actor.Cast(sys, srv, "answer now")
	if recv(t, s.taken) {
		t.Fatal("ReplyError took a reply to a call whose caller was killed")
	}
	if n := sys.Stats().LateReplies; n != 1 {
		t.Fatalf("Stats.LateReplies = %d after a reply to a killed caller, want 1", n)
	}
}
