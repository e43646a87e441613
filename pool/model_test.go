package pool_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/pool"
)

// A holder is a test actor that checks workers out and in on command and
// reports each result on its own channel.
type holderCmd struct {
	op string // checkout, try, checkin
	w  actor.Pid
}

type holderRes struct {
	w   actor.Pid
	st  pool.Status
	err error
}

type holder struct {
	pid  actor.Pid
	out  chan holderRes
	held []actor.Pid // the model's: the workers it holds
}

func spawnHolder(t *rapid.T, sys *actor.System, p *pool.Pool) *holder {
	h := &holder{out: make(chan holderRes, 8)}
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		m := msg.(holderCmd)
		switch m.op {
		case "checkout":
			w, err := p.Checkout(c, actor.Infinity)
			h.out <- holderRes{w: w, err: err}
		case "try":
			w, err := p.TryCheckout(c)
			h.out <- holderRes{w: w, err: err}
		case "checkin":
			p.Checkin(c, m.w)
			st, err := p.Status(c) // after the checkin: one sender's messages keep their order
			h.out <- holderRes{st: st, err: err}
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	h.pid = pid
	return h
}

func (h *holder) result(t *rapid.T) holderRes {
	select {
	case r := <-h.out:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("holder %v: no result", h.pid)
	}
	panic("unreachable")
}

// poolModel is poolboy's rules as counts and queues.
type poolModel struct {
	size, maxOverflow int
	idle, overflow    int
	waiting           []*holder // oldest first
}

// TestPoolModel checks a Pool against a model of poolboy's rules through
// random sequences of blocking and non-blocking checkouts, checkins
// (stale ones included), holder deaths and worker deaths, with random
// Size and MaxOverflow: after each step the pool's Status and its map of
// busy workers to holders equal the model's, every checkout the model
// grants returns a live worker nobody else holds, a checkin goes to the
// oldest waiting holder, and no worker is ever held twice.
func TestPoolModel(t *testing.T) {
	sys, _ := startSys(t)
	rapid.Check(t, func(rt *rapid.T) {
		m := &poolModel{size: rapid.IntRange(1, 3).Draw(rt, "size"), maxOverflow: rapid.IntRange(0, 2).Draw(rt, "maxOverflow")}
		m.idle = m.size
		p, err := pool.Start(sys, startWorker, pool.Size(m.size), pool.MaxOverflow(m.maxOverflow))
		if err != nil {
			rt.Fatal(err)
		}
		defer func() {
			if err := p.Stop(t.Context()); err != nil {
				rt.Fatal(err)
			}
		}()
		holders := make([]*holder, 4)
		for i := range holders {
			holders[i] = spawnHolder(rt, sys, p)
		}
		defer func() {
			for _, h := range holders {
				sys.Exit(h.pid, actor.Kill)
			}
		}()
		var dead []actor.Pid // workers killed: stale pids
		waitingFor := func(h *holder) bool { return slices.Contains(m.waiting, h) }
		heldBy := func(w actor.Pid) *holder {
			for _, h := range holders {
				if slices.Contains(h.held, w) {
					return h
				}
			}
			return nil
		}
		// grantNew: the model hands out a worker (idle or overflow), or
		// says the caller must wait (false).
		grantNew := func() bool {
			switch {
			case m.idle > 0:
				m.idle--
			case m.overflow < m.maxOverflow:
				m.overflow++
			default:
				return false
			}
			return true
		}
		// take records a worker the pool granted h.
		take := func(rt *rapid.T, h *holder, r holderRes) {
			if r.err != nil {
				rt.Fatalf("checkout: %v", r.err)
			}
			if o := heldBy(r.w); o != nil {
				rt.Fatalf("worker %v granted to %v, held by %v", r.w, h.pid, o.pid)
			}
			if !sys.Alive(r.w) {
				rt.Fatalf("worker %v granted dead", r.w)
			}
			h.held = append(h.held, r.w)
		}
		// free: a worker stops being busy; who gets it, by the model.
		// served are the waiting holders it hands a worker to.
		free := func() (served *holder) {
			if len(m.waiting) > 0 {
				served, m.waiting = m.waiting[0], m.waiting[1:]
				return served
			}
			if m.overflow > 0 {
				m.overflow--
			} else {
				m.idle++
			}
			return nil
		}
		settle := func(rt *rapid.T) {
			busy := 0
			want := map[actor.Pid]actor.Pid{}
			for _, h := range holders {
				busy += len(h.held)
				for _, w := range h.held {
					want[w] = h.pid
				}
			}
			wantSt := pool.Status{Size: m.size, Idle: m.idle, Busy: busy, Overflow: m.overflow, Waiting: len(m.waiting)}
			deadline := time.Now().Add(10 * time.Second)
			for {
				st, err := p.Status(sys)
				_, got, derr := pool.Debug(sys, p)
				if err == nil && derr == nil && st == wantSt && fmt.Sprint(got) == fmt.Sprint(want) {
					return
				}
				if time.Now().After(deadline) {
					rt.Fatalf("status %+v (%v), want %+v; busy %v, want %v", st, err, wantSt, got, want)
				}
				time.Sleep(time.Millisecond)
			}
		}
		pick := func(rt *rapid.T, ok func(*holder) bool, what string) *holder {
			var hs []*holder
			for _, h := range holders {
				if ok(h) {
					hs = append(hs, h)
				}
			}
			if len(hs) == 0 {
				rt.Skip("no holder " + what)
			}
			return hs[rapid.IntRange(0, len(hs)-1).Draw(rt, "holder")]
		}
		rt.Repeat(map[string]func(*rapid.T){
			"checkout": func(rt *rapid.T) {
				h := pick(rt, func(h *holder) bool { return !waitingFor(h) }, "free to call")
				sys.Send(h.pid, holderCmd{op: "checkout"})
				if grantNew() {
					take(rt, h, h.result(rt))
				} else {
					m.waiting = append(m.waiting, h)
				}
				settle(rt)
			},
			"try": func(rt *rapid.T) {
				h := pick(rt, func(h *holder) bool { return !waitingFor(h) }, "free to call")
				sys.Send(h.pid, holderCmd{op: "try"})
				r := h.result(rt)
				if grantNew() {
					take(rt, h, r)
				} else if !errors.Is(r.err, pool.ErrFull) {
					rt.Fatalf("try with nothing free: %v, %v", r.w, r.err)
				}
				settle(rt)
			},
			"checkin": func(rt *rapid.T) {
				h := pick(rt, func(h *holder) bool { return !waitingFor(h) && len(h.held) > 0 }, "holding")
				i := rapid.IntRange(0, len(h.held)-1).Draw(rt, "worker")
				w := h.held[i]
				h.held = slices.Delete(h.held, i, i+1)
				sys.Send(h.pid, holderCmd{op: "checkin", w: w})
				if r := h.result(rt); r.err != nil {
					rt.Fatal(r.err)
				}
				if s := free(); s != nil {
					r := s.result(rt)
					if r.w != w {
						rt.Fatalf("the waiting holder got %v, want the one checked in, %v", r.w, w)
					}
					take(rt, s, r)
				}
				settle(rt)
			},
			"checkin stale": func(rt *rapid.T) {
				h := pick(rt, func(h *holder) bool { return !waitingFor(h) }, "free to call")
				stale := append([]actor.Pid{h.pid}, dead...)
				for _, o := range holders {
					if o != h {
						stale = append(stale, o.held...) // another's worker: not ours to check in
					}
				}
				w := stale[rapid.IntRange(0, len(stale)-1).Draw(rt, "stale")]
				if o := heldBy(w); o != nil && o != h {
					// poolboy does not check who checks in: the pool takes it back
					o.held = slices.DeleteFunc(o.held, func(x actor.Pid) bool { return x == w })
					sys.Send(h.pid, holderCmd{op: "checkin", w: w})
					h.result(rt)
					if s := free(); s != nil {
						take(rt, s, s.result(rt))
					}
				} else {
					sys.Send(h.pid, holderCmd{op: "checkin", w: w})
					h.result(rt)
				}
				settle(rt)
			},
			"holder dies": func(rt *rapid.T) {
				i := rapid.IntRange(0, len(holders)-1).Draw(rt, "holder")
				h := holders[i]
				sys.Exit(h.pid, actor.Kill)
				m.waiting = slices.DeleteFunc(m.waiting, func(x *holder) bool { return x == h })
				var served []*holder
				for range h.held {
					if s := free(); s != nil {
						served = append(served, s)
					}
				}
				for _, s := range served {
					r := s.result(rt)
					if !slices.Contains(h.held, r.w) {
						rt.Fatalf("a waiting holder got %v, not one of the dead holder's %v", r.w, h.held)
					}
					h.held = slices.DeleteFunc(h.held, func(x actor.Pid) bool { return x == r.w })
					take(rt, s, r)
				}
				holders[i] = spawnHolder(rt, sys, p)
				settle(rt)
			},
			"worker dies": func(rt *rapid.T) {
				idle, _, err := pool.Debug(sys, p)
				if err != nil {
					rt.Fatal(err)
				}
				all := slices.Clone(idle)
				for _, h := range holders {
					all = append(all, h.held...)
				}
				if len(all) == 0 {
					rt.Skip("no worker")
				}
				w := all[rapid.IntRange(0, len(all)-1).Draw(rt, "worker")]
				if h := heldBy(w); h != nil {
					h.held = slices.DeleteFunc(h.held, func(x actor.Pid) bool { return x == w })
				} else {
					m.idle--
				}
				sys.Exit(w, actor.Kill)
				dead = append(dead, w)
				if m.overflow > 0 && len(m.waiting) == 0 {
					m.overflow--
				} else if s := free(); s != nil { // a replacement
					take(rt, s, s.result(rt))
				}
				settle(rt)
			},
		})
	})
}
