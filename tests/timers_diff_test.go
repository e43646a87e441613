package tests

// The Go side of the timer, selective-receive and message-order scenarios in
// testdata/erlang/timers: each subtest runs the escript live (erldiff.Run),
// runs the same scenario on Colony, and compares the traces. The scenarios
// run in the link scenarios' harness (runLinks: a non-trapping main, lloop
// processes that forward to main); the helpers below mirror
// colony_timers.hrl.
//
// Timing never decides a trace: timers that must arrive in some order have
// deadlines far apart (20 ms against 100 ms and more), a remaining time is
// printed only as its class (ms_left: within 0..Delay, or false), and
// timers that expire together are printed sorted, since OTP promises no
// order for them.
//
// erlang:start_timer/3 is StartTimer, and its {timeout, Ref, Msg} message
// an actor.Timeout, which the tracer prints as that tuple with the ref's
// name.

import (
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// tscen is a running timer scenario.
type tscen struct {
	*lscen
	ntimers int
}

// armedMsg is {armed, T}: a timer ref sent to main by the process that
// armed it.
type armedMsg struct{ ref actor.TimerRef }

// tmr is a timer armed by the scenario, with its trace name.
type tmr struct {
	ref  actor.TimerRef
	name string
}

// sendAfter is colony_timers.hrl's send_after/3: it arms a timer and names
// it t1, t2, ... in arming order.
func (s *tscen) sendAfter(d time.Duration, dest actor.Pid, msg any) tmr {
	ref, err := s.c.SendAfter(dest, msg, d)
	must(err)
	return s.nameTimer(ref)
}

// sendAfterName is send_after/3 to a registered name: SendAfterName, its
// ref named as sendAfter's.
func (s *tscen) sendAfterName(d time.Duration, name string, msg any) tmr {
	ref, err := s.c.SendAfterName(name, msg, d)
	must(err)
	return s.nameTimer(ref)
}

// startTimer is start_timer/3: StartTimer, its ref named as sendAfter's.
func (s *tscen) startTimer(d time.Duration, dest actor.Pid, msg any) tmr {
	ref, err := s.c.StartTimer(dest, msg, d)
	must(err)
	return s.nameTimer(ref)
}

// nameTimer names ref t<N>, the scenario's Nth timer. The zero TimerRef (a
// timer to a dead pid) is not recorded: it names no timer, and a Timeout
// that carried it would print as unnamed_ref.
func (s *tscen) nameTimer(ref actor.TimerRef) tmr {
	s.ntimers++
	t := tmr{ref, fmt.Sprintf("t%d", s.ntimers)}
	if ref != (actor.TimerRef{}) {
		s.tracer.nameTimer(ref, t.name)
	}
	return t
}

// timeLeft is left/2: the class of a remaining time, ms_left if it lies in
// 0..delay.
func timeLeft(d time.Duration, pending bool, delay time.Duration) any {
	switch {
	case !pending:
		return false
	case d >= 0 && d <= delay:
		return "ms_left"
	}
	return tup{"bad_left", int(d / time.Millisecond)}
}

// read is read/2.
func (s *tscen) read(t tmr, delay time.Duration) {
	d, ok := s.c.ReadTimer(t.ref)
	s.ev("read_timer", t.name, timeLeft(d, ok, delay))
}

// cancel is cancel/2. erlang:cancel_timer/1 returns the time left; Colony's
// CancelTimer only says whether the timer was pending, so the time left is
// read just before it.
func (s *tscen) cancel(t tmr, delay time.Duration) {
	s.ev("cancel_timer", t.name, cancelLeft(s.c, t, delay))
}

// cancelLeft is left(erlang:cancel_timer(T), Delay) made by c's actor.
func cancelLeft(c *actor.Context, t tmr, delay time.Duration) any {
	d, ok := c.ReadTimer(t.ref)
	cancelled := c.CancelTimer(t.ref)
	if cancelled != ok {
		return fmt.Sprintf("read_%v_cancel_%v", ok, cancelled)
	}
	return timeLeft(d, cancelled, delay)
}

// recvMatch is receive Msg -> ev([recv, main, Msg]) end: a selective
// receive of one message.
func (s *tscen) recvMatch(msg any) {
	m, err := s.c.Receive(func(m any) bool { return m == msg }, actor.Infinity)
	must(err)
	s.ev("recv", "main", m)
}

// recvAfter is a receive ... after timeout: match nil takes any message.
func (s *tscen) recvAfter(match func(any) bool, timeout time.Duration) {
	m, err := s.c.Receive(match, timeout)
	if errors.Is(err, actor.ErrTimeout) {
		s.ev("timeout", "main")
		return
	}
	must(err)
	s.ev("recv", "main", m)
}

func isMsg(msg any) func(any) bool { return func(m any) bool { return m == msg } }

// take is take/1: the next n messages, in order.
func (s *tscen) take(n int) []any {
	ms := make([]any, n)
	for i := range ms {
		m, err := s.c.Receive(nil, actor.Infinity)
		must(err)
		ms[i] = m
	}
	return ms
}

// seqs is seqs/2: per sender, the payloads of its {P, I} messages in
// receipt order.
func (s *tscen) seqs(senders []string, ms []any) {
	for _, p := range senders {
		seq := []any{}
		for _, m := range ms {
			if t, ok := m.(tup); ok && len(t) == 2 && t[0] == actor.Atom(p) {
				seq = append(seq, t[1])
			}
		}
		s.ev("seq", p, seq)
	}
}

// settledMailbox is settled_mailbox/0: it prints, and takes out, what is
// left in main's mailbox, plain messages as themselves.
func (s *tscen) settledMailbox() {
	s.printMailboxAs(s.drainMailbox(), func(m any) any { return m })
}

const milli = time.Millisecond

// armedByDying is the escripts' process that, told go, arms a timer, sends
// main {armed, T} and exits with boom: it returns T once the process is
// down (its 'DOWN' printed).
func (s *tscen) armedByDying(name string, arm func(c *actor.Context) (actor.TimerRef, error)) actor.TimerRef {
	main := s.c.Self()
	a := s.spawnNamed(name, actor.ActorFunc(func(c *actor.Context, msg any) {
		if msg != actor.Atom("go") {
			return
		}
		ref, err := arm(c)
		must(err)
		c.Send(main, armedMsg{ref})
		c.Stop(boom)
	}))
	ma := s.mon(a)
	s.c.Send(a, actor.Atom("go"))
	m, err := s.c.Receive(func(m any) bool { _, ok := m.(armedMsg); return ok }, actor.Infinity)
	must(err)
	s.awaitDown(ma)
	return m.(armedMsg).ref
}

// flushMsg is the escripts' flush/1: it takes every msg queued now.
func flushMsg(c *actor.Context, msg any) {
	for {
		if _, err := c.Receive(isMsg(msg), 0); err != nil {
			return
		}
	}
}

var timerScenarios = map[string]func(s *tscen){
	"send_after_self": func(s *tscen) {
		self := s.c.Self()
		t1 := s.sendAfter(20*milli, self, actor.Atom("ping"))
		s.recv()
		s.read(t1, 20*milli)
		s.cancel(t1, 20*milli)
		t2 := s.sendAfter(0, self, actor.Atom("zero"))
		s.recv()
		s.read(t2, 0)
		s.settledMailbox()
	},
	"deadline_order": func(s *tscen) {
		self := s.c.Self()
		s.sendAfter(200*milli, self, actor.Atom("late"))
		s.sendAfter(100*milli, self, actor.Atom("mid"))
		s.sendAfter(20*milli, self, actor.Atom("early"))
		s.recv()
		s.recv()
		s.recv()
		s.settledMailbox()
	},
	"equal_deadline": func(s *tscen) {
		for i := 1; i <= 5; i++ {
			s.sendAfter(50*milli, s.c.Self(), tup{actor.Atom("n"), i})
		}
		got := s.take(5)
		n := func(m any) int { return m.(tup)[1].(int) }
		sort.Slice(got, func(i, j int) bool { return n(got[i]) < n(got[j]) })
		s.ev("recv_sorted", "main", got)
		s.settledMailbox()
	},
	"cancel_pending": func(s *tscen) {
		t1 := s.sendAfter(100*milli, s.c.Self(), actor.Atom("cancelled"))
		s.read(t1, 100*milli)
		s.cancel(t1, 100*milli)
		s.read(t1, 100*milli)
		s.cancel(t1, 100*milli)
		s.sendAfter(250*milli, s.c.Self(), actor.Atom("marker"))
		s.recv()
		s.settledMailbox()
	},
	"cancel_fired": func(s *tscen) {
		t1 := s.sendAfter(10*milli, s.c.Self(), actor.Atom("fired"))
		s.awaitMailbox(1)
		s.read(t1, 10*milli)
		s.cancel(t1, 10*milli)
		s.settledMailbox()
	},
	"cancel_unknown": func(s *tscen) {
		// The zero TimerRef, Colony's ref that names no timer, for a
		// make_ref() that was never a timer.
		t0 := tmr{name: "t0"}
		s.cancel(t0, 0)
		s.read(t0, 0)
		s.settledMailbox()
	},
	"send_after_name": func(s *tscen) {
		a := s.spawnLoop("a")
		must(s.c.System().Register("ticker", a))
		s.sendAfterName(20*milli, "ticker", actor.Atom("one"))
		s.awaitFwd(a)
		s.sendAfterName(150*milli, "ticker", actor.Atom("two"))
		ma := s.mon(a)
		must(s.c.Exit(a, actor.Kill))
		s.awaitDown(ma)
		b := s.spawnLoop("b")
		must(s.c.System().Register("ticker", b))
		s.awaitFwd(b)
		t3 := s.sendAfterName(20*milli, "nobody", actor.Atom("three"))
		s.read(t3, 20*milli)
		// await_fired: poll until t3 is no longer pending, for at most
		// about 5 s (a fixed sleep past its delay was outlasted by a late
		// timer on a busy machine).
		for i := 0; i < 5000; i++ {
			if _, pending := s.c.ReadTimer(t3.ref); !pending {
				break
			}
			must(s.c.Sleep(milli))
		}
		s.read(t3, 20*milli)
		t4 := s.sendAfterName(5*time.Second, "ticker", actor.Atom("never"))
		s.cancel(t4, 5*time.Second)
		s.settledMailbox()
	},
	"dead_destination": func(s *tscen) {
		d := s.deadPid("d")
		t1 := s.sendAfter(20*milli, d, actor.Atom("hi"))
		s.ev("send_after", t1.name, d, "ok")
		s.read(t1, 20*milli)
		s.cancel(t1, 20*milli)
		a := s.spawnLoop("a")
		t2 := s.sendAfter(5*time.Second, a, actor.Atom("never"))
		s.read(t2, 5*time.Second)
		s.sendAfter(20*milli, a, actor.Atom("hello"))
		s.awaitFwd(a)
		ma := s.mon(a)
		s.die(a, boom)
		s.awaitDown(ma)
		s.read(t2, 5*time.Second)
		s.cancel(t2, 5*time.Second)
		s.settledMailbox()
	},
	"selective_receive": func(s *tscen) {
		self := s.c.Self()
		for _, m := range []string{"a", "b", "c", "d"} {
			s.c.Send(self, actor.Atom(m))
		}
		s.recvMatch(actor.Atom("c"))
		s.recvMatch(actor.Atom("b"))
		s.recv()
		s.sendAfter(20*milli, self, actor.Atom("early"))
		s.sendAfter(100*milli, self, actor.Atom("wanted"))
		s.recvMatch(actor.Atom("wanted"))
		s.settledMailbox()
	},
	"after_zero": func(s *tscen) {
		self := s.c.Self()
		s.recvAfter(nil, 0)
		s.c.Send(self, actor.Atom("x"))
		s.recvAfter(isMsg(actor.Atom("y")), 0)
		s.c.Send(self, actor.Atom("y"))
		s.recvAfter(isMsg(actor.Atom("y")), 0)
		s.recvAfter(nil, 0)
		s.recvAfter(nil, 0)
		s.settledMailbox()
	},
	"receive_timeout": func(s *tscen) {
		self := s.c.Self()
		late := actor.Atom("late")
		s.sendAfter(150*milli, self, late)
		s.recvAfter(isMsg(late), 20*milli)
		s.recvAfter(isMsg(late), actor.Infinity)
		s.sendAfter(20*milli, self, actor.Atom("during"))
		must(s.c.Sleep(100 * milli))
		s.settledMailbox()
	},
	"sender_fifo": func(s *tscen) {
		main := s.c.Self()
		sender := func(name string) actor.Pid {
			return s.spawnNamed(name, actor.ActorFunc(func(c *actor.Context, msg any) {
				if msg != actor.Atom("go") {
					return
				}
				for i := 1; i <= 20; i++ {
					c.Send(main, tup{actor.Atom(name), i})
				}
				c.Stop(actor.Normal)
			}))
		}
		a, b := sender("a"), sender("b")
		s.c.Send(a, actor.Atom("go"))
		s.c.Send(b, actor.Atom("go"))
		s.seqs([]string{"a", "b"}, s.take(40))
		s.settledMailbox()
	},
	"self_fifo": func(s *tscen) {
		self := s.c.Self()
		for i := 1; i <= 5; i++ {
			s.c.Send(self, tup{actor.Atom("main"), i})
		}
		s.sendAfter(0, self, actor.Atom("tick"))
		s.recvMatch(actor.Atom("tick"))
		for i := 6; i <= 10; i++ {
			s.c.Send(self, tup{actor.Atom("main"), i})
		}
		s.seqs([]string{"main"}, s.take(10))
		s.settledMailbox()
	},
	"send_interval": func(s *tscen) {
		main := s.c.Self()
		t1, err := s.c.SendInterval(main, actor.Atom("tick"), 50*milli)
		must(err)
		s.recv()
		s.recv()
		s.recv()
		if !s.c.CancelTimer(t1) {
			panic("CancelTimer of a running interval: false")
		}
		s.ev("cancelled", actor.Atom("interval"))
		flushMsg(s.c, actor.Atom("tick"))
		must(s.c.Sleep(150 * milli))
		s.settledMailbox()
		ref := s.armedByDying("a", func(c *actor.Context) (actor.TimerRef, error) {
			return c.SendInterval(main, actor.Atom("from_a"), 50*milli)
		})
		s.recv()
		s.recv()
		if !s.c.CancelTimer(ref) {
			panic("CancelTimer of a running interval: false")
		}
		s.ev("cancelled", actor.Atom("from_a"))
		flushMsg(s.c, actor.Atom("from_a"))
		must(s.c.Sleep(150 * milli))
		s.settledMailbox()
	},
	"creator_dies": func(s *tscen) {
		main := s.c.Self()
		ref := s.armedByDying("a", func(c *actor.Context) (actor.TimerRef, error) {
			return c.SendAfter(main, actor.Atom("from_a"), 200*milli)
		})
		s.ntimers++ // a armed it: send_after/3 named it t1 in a
		t1 := tmr{ref, "t1"}
		s.read(t1, 200*milli)
		s.recv()
		s.read(t1, 200*milli)
		s.settledMailbox()
	},
	"start_timer_ref": func(s *tscen) {
		self := s.c.Self()
		t1 := s.startTimer(20*milli, self, actor.Atom("ping"))
		s.recv()
		s.read(t1, 20*milli)
		s.cancel(t1, 20*milli)
		a := s.spawnLoop("a")
		s.startTimer(20*milli, a, actor.Atom("hi"))
		s.awaitFwd(a)
		s.sendAfter(20*milli, self, actor.Atom("plain"))
		s.recv()
		s.startTimer(0, self, actor.Atom("zero"))
		s.recv()
		tick := tup{"tick", []any{1, 2}}
		s.startTimer(100*milli, self, tick)
		s.startTimer(20*milli, self, tick)
		s.recv()
		s.recv()
		s.settledMailbox()
	},
	"start_timer_stale": func(s *tscen) {
		self := s.c.Self()
		takeTick := func(cur tmr) {
			m, err := s.c.Receive(func(m any) bool {
				t, ok := m.(actor.Timeout)
				return ok && t.Msg == actor.Atom("tick")
			}, actor.Infinity)
			must(err)
			t := m.(actor.Timeout)
			state := "stale"
			if t.Ref == cur.ref {
				state = "current"
			}
			s.ev("tick", t.Ref, state)
		}
		t1 := s.startTimer(10*milli, self, actor.Atom("tick"))
		s.awaitMailbox(1)
		s.cancel(t1, 10*milli)
		t2 := s.startTimer(100*milli, self, actor.Atom("tick"))
		takeTick(t2)
		takeTick(t2)
		t3 := s.startTimer(100*milli, self, actor.Atom("tick"))
		s.cancel(t3, 100*milli)
		t4 := s.startTimer(250*milli, self, actor.Atom("tick"))
		takeTick(t4)
		s.settledMailbox()
	},
	"start_timer_dead": func(s *tscen) {
		main := s.c.Self()
		d := s.deadPid("d")
		t1 := s.startTimer(20*milli, d, actor.Atom("hi"))
		s.ev("start_timer", t1.name, d, "ok")
		s.read(t1, 20*milli)
		s.cancel(t1, 20*milli)
		a := s.spawnLoop("a")
		t2 := s.startTimer(5*time.Second, a, actor.Atom("never"))
		s.read(t2, 5*time.Second)
		s.startTimer(20*milli, a, actor.Atom("hello"))
		s.awaitFwd(a)
		b := s.spawnLoop("b")
		mb := s.mon(b)
		t4 := s.nameTimer(s.call(b, func(c *actor.Context) any {
			ref, err := c.StartTimer(main, actor.Atom("from_b"), 200*milli)
			must(err)
			return ref
		}).(actor.TimerRef))
		s.die(b, boom)
		s.awaitDown(mb)
		s.read(t4, 200*milli)
		ma := s.mon(a)
		s.die(a, boom)
		s.awaitDown(ma)
		s.read(t2, 5*time.Second)
		s.cancel(t2, 5*time.Second)
		s.recv()
		s.settledMailbox()
	},
	"start_timer_cancel": func(s *tscen) {
		self := s.c.Self()
		t1 := s.startTimer(100*milli, self, actor.Atom("cancelled"))
		s.read(t1, 100*milli)
		s.cancel(t1, 100*milli)
		s.read(t1, 100*milli)
		s.cancel(t1, 100*milli)
		a := s.spawnLoop("a")
		t2 := s.startTimer(100*milli, self, actor.Atom("by_a"))
		s.ev("cancel_timer_by", a, t2.name, s.call(a, func(c *actor.Context) any { return cancelLeft(c, t2, 100*milli) }))
		s.read(t2, 100*milli)
		s.startTimer(250*milli, self, actor.Atom("marker"))
		s.recv()
		t4 := s.startTimer(10*milli, self, actor.Atom("fired"))
		s.awaitMailbox(1)
		s.read(t4, 10*milli)
		s.cancel(t4, 10*milli)
		s.settledMailbox()
	},
	"msg_before_exit": func(s *tscen) {
		s.c.TrapExit(true)
		main := s.c.Self()
		a, err := s.c.SpawnLink(actor.ActorFunc(func(c *actor.Context, msg any) {
			if msg != actor.Atom("go") {
				return
			}
			c.Send(main, tup{actor.Atom("a"), 1})
			c.Send(main, tup{actor.Atom("a"), 2})
			c.Stop(boom)
		}))
		must(err)
		s.name(a, "a")
		s.c.Send(a, actor.Atom("go"))
		s.recv()
		s.recv()
		s.recv()
		b := s.spawnNamed("b", actor.ActorFunc(func(c *actor.Context, msg any) {
			if msg != actor.Atom("go") {
				return
			}
			c.Send(main, tup{actor.Atom("b"), 1})
			c.Exit(main, boom)
			c.Send(main, tup{actor.Atom("b"), 2})
			c.Stop(actor.Normal)
		}))
		s.c.Send(b, actor.Atom("go"))
		s.recv()
		s.recv()
		s.recv()
		s.settledMailbox()
	},
}

func TestTimersDiff(t *testing.T) {
	runGroup(t, "timers", timerScenarios, func(t *testing.T, body func(*tscen)) []string {
		return runLinks(t, func(s *lscen) { body(&tscen{lscen: s}) })
	})
}
