package statem

// A rapid state-machine test of core (the event queue and the timeout
// table) against a reference model that transliterates gen_statem.erl's
// loop: front-first lists joined with explicit concatenation, timers whose
// messages carry a ref and are flushed from the mailbox when cancelled, and
// t0q as OTP keeps it. The implementation differs where it matters: a
// stack for the queue, and stale timer messages dropped by generation
// instead of flushed. Both run the same drawn script (events whose content
// says what to do in each state, and clock advances) and must handle the
// same events in the same order, with the same contents, in the same states.

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
)

const modelStates = 3

// spec is an event's content: what handling it does, by state.
type spec struct {
	label      int
	postponeIn [modelStates]bool
	next       [modelStates]int // -1: keep the state
	inserts    []*spec
	timeouts   []specTimeout
}

type specTimeout struct {
	key timerKey
	op  timerOp
	d   time.Duration // opStart: ticks; actor.Infinity cancels
	msg *spec
}

var modelKeys = []timerKey{{typ: Timeout}, {typ: StateTimeout}, {typ: GenericTimeout, name: "x"}, {typ: GenericTimeout, name: "y"}}

func drawSpec(t *rapid.T, depth int, labels *int) *spec {
	*labels++
	s := &spec{label: *labels}
	for i := range modelStates {
		s.postponeIn[i] = rapid.IntRange(0, 3).Draw(t, "postpone") == 0
		s.next[i] = rapid.IntRange(-1, modelStates-1).Draw(t, "next")
	}
	if depth > 0 {
		for range rapid.IntRange(0, 2).Draw(t, "inserts") {
			s.inserts = append(s.inserts, drawSpec(t, depth-1, labels))
		}
		for range rapid.IntRange(0, 2).Draw(t, "timeouts") {
			to := specTimeout{key: modelKeys[rapid.IntRange(0, len(modelKeys)-1).Draw(t, "key")]}
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0:
				to.op = opUpdate
			case 1:
				to.op = opCancel
			case 2:
				to.op, to.d = opStart, actor.Infinity
			default:
				to.op, to.d = opStart, time.Duration(rapid.IntRange(0, 4).Draw(t, "d"))
			}
			if to.op != opCancel {
				to.msg = drawSpec(t, depth-1, labels)
			}
			s.timeouts = append(s.timeouts, to)
		}
	}
	return s
}

// handled is one event as handled: its state, type (and timeout name) and
// content's label.
type handled struct {
	state int
	typ   EventType
	name  string
	label int
}

func (h handled) String() string { return fmt.Sprintf("%d:%v/%s:%d", h.state, h.typ, h.name, h.label) }

func evSpec(ev Event) *spec { return ev.Msg.(*spec) }

// transitionOf is what handling sp in state does, in core's terms.
func transitionOf(sp *spec, state int) (tr transition, next int) {
	next = state
	if n := sp.next[state]; n >= 0 {
		next = n
	}
	tr.postpone = sp.postponeIn[state]
	tr.changed = next != state
	for _, in := range sp.inserts {
		tr.next = append(tr.next, Event{Type: Internal, Msg: in})
	}
	for _, to := range sp.timeouts {
		var msg any
		if to.msg != nil {
			msg = to.msg
		}
		tr.timeouts = append(tr.timeouts, timeoutAction{key: to.key, op: to.op, d: to.d, msg: msg})
	}
	return tr, next
}

// clock is a virtual timer wheel shared by the implementation's backend:
// timers fire in deadline order, ties in arming order.
type fakeTimer struct {
	at, seq int64
	msg     timerFired
}

type implHarness struct {
	q       core
	state   int
	now     int64
	seq     int64
	pending []fakeTimer
	mailbox []any // Event or timerFired
	out     []handled
}

func (h *implHarness) startTimer(m timerFired, d time.Duration) actor.TimerRef {
	h.seq++
	h.pending = append(h.pending, fakeTimer{at: h.now + int64(d), seq: h.seq, msg: m})
	return actor.TimerRef{}
}

func (h *implHarness) cancelTimer(id uint64, _ actor.TimerRef) {
	h.pending = slices.DeleteFunc(h.pending, func(f fakeTimer) bool { return f.msg.id == id })
}

func (h *implHarness) advance(dt int64) {
	h.now += dt
	sort.Slice(h.pending, func(i, j int) bool {
		a, b := h.pending[i], h.pending[j]
		return a.at < b.at || a.at == b.at && a.seq < b.seq
	})
	n := 0
	for n < len(h.pending) && h.pending[n].at <= h.now {
		h.mailbox = append(h.mailbox, h.pending[n].msg)
		n++
	}
	h.pending = h.pending[n:]
}

func (h *implHarness) handle(ev Event) {
	sp := evSpec(ev)
	h.out = append(h.out, handled{h.state, ev.Type, ev.Name, sp.label})
	tr, next := transitionOf(sp, h.state)
	h.q.commit(h, &ev, &tr)
	h.state = next
}

// maxHandled bounds a run: an event postponed in one state and changing
// to another, in both, loops for ever, in OTP as here.
const maxHandled = 400

// run handles events until the queue, the zero timeouts and the mailbox
// are empty, as the server does between two clock advances, or until
// maxHandled events in all.
func (h *implHarness) run() {
	for len(h.out) < maxHandled {
		if ev, ok := h.q.next(); ok {
			h.handle(ev)
			continue
		}
		if len(h.mailbox) == 0 {
			return
		}
		m := h.mailbox[0]
		h.mailbox = h.mailbox[1:]
		switch m := m.(type) {
		case timerFired:
			if ev, ok := h.q.fired(m); ok {
				h.handle(ev)
			}
		case Event:
			h.handle(m)
		}
	}
}

// The reference model, after gen_statem.erl.
type modelTimer struct {
	ref int // 0: a zero timeout in t0q
	msg any
}

type modelFire struct { // erlang:start_timer's {timeout, Ref, Type}
	ref int
	key timerKey
}

type modelPending struct {
	at, seq int64
	fire    modelFire
}

type refModel struct {
	state     int
	events    []Event // Q after the current event, front first
	postponed []Event // newest first, as OTP keeps it
	timers    map[timerKey]modelTimer
	t0q       []timerKey
	mailbox   []any // Event or modelFire
	pending   []modelPending
	now, seq  int64
	refs      int
	out       []handled
}

func (m *refModel) advance(dt int64) {
	m.now += dt
	sort.Slice(m.pending, func(i, j int) bool {
		a, b := m.pending[i], m.pending[j]
		return a.at < b.at || a.at == b.at && a.seq < b.seq
	})
	for len(m.pending) > 0 && m.pending[0].at <= m.now {
		m.mailbox = append(m.mailbox, m.pending[0].fire)
		m.pending = m.pending[1:]
	}
}

// cancelTimer is cancel_timer/3: stop the timer, or flush its message.
func (m *refModel) cancelTimer(key timerKey) {
	t, ok := m.timers[key]
	if !ok {
		return
	}
	if t.ref == 0 {
		m.t0q = slices.DeleteFunc(m.t0q, func(k timerKey) bool { return k == key })
	} else {
		m.pending = slices.DeleteFunc(m.pending, func(p modelPending) bool { return p.fire.ref == t.ref })
		m.mailbox = slices.DeleteFunc(m.mailbox, func(x any) bool { f, ok := x.(modelFire); return ok && f.ref == t.ref })
	}
	delete(m.timers, key)
}

func (m *refModel) handle(ev Event) {
	sp := evSpec(ev)
	m.out = append(m.out, handled{m.state, ev.Type, ev.Name, sp.label})
	tr, next := transitionOf(sp, m.state)
	// loop_state_transition
	if tr.postpone {
		m.postponed = append([]Event{ev}, m.postponed...)
	}
	if next != m.state { // loop_state_change
		re := slices.Clone(m.postponed)
		slices.Reverse(re)
		m.events = append(re, m.events...)
		m.postponed = nil
		m.cancelTimer(timerKey{typ: StateTimeout})
	}
	m.cancelTimer(timerKey{typ: Timeout}) // loop_keep_state, loop_state_change
	// loop_timeouts: from the last action, each key once
	seen := map[timerKey]bool{}
	var timeoutEvents []timerKey
	for i := len(tr.timeouts) - 1; i >= 0; i-- {
		a := tr.timeouts[i]
		if seen[a.key] {
			continue
		}
		seen[a.key] = true
		switch {
		case a.op == opCancel || a.op == opStart && a.d == actor.Infinity:
			m.cancelTimer(a.key)
		case a.op == opUpdate:
			if t, ok := m.timers[a.key]; ok {
				m.timers[a.key] = modelTimer{t.ref, a.msg}
			} else {
				m.timers[a.key] = modelTimer{0, a.msg}
				timeoutEvents = append([]timerKey{a.key}, timeoutEvents...)
			}
		case a.d == 0:
			m.cancelTimer(a.key)
			m.timers[a.key] = modelTimer{0, a.msg}
			timeoutEvents = append([]timerKey{a.key}, timeoutEvents...)
		default:
			m.cancelTimer(a.key)
			m.refs++
			m.seq++
			m.pending = append(m.pending, modelPending{m.now + int64(a.d), m.seq, modelFire{m.refs, a.key}})
			m.timers[a.key] = modelTimer{m.refs, a.msg}
		}
	}
	m.t0q = append(m.t0q, timeoutEvents...)
	m.events = append(slices.Clone(tr.next), m.events...) // loop_done
	m.state = next
}

func (m *refModel) run() {
	for len(m.out) < maxHandled {
		if len(m.events) > 0 {
			ev := m.events[0]
			m.events = m.events[1:]
			m.handle(ev)
			continue
		}
		if len(m.t0q) > 0 {
			k := m.t0q[0]
			t := m.timers[k]
			m.cancelTimer(k)
			m.handle(k.event(t.msg))
			continue
		}
		if len(m.mailbox) == 0 {
			return
		}
		x := m.mailbox[0]
		m.mailbox = m.mailbox[1:]
		switch x := x.(type) {
		case modelFire:
			t, ok := m.timers[x.key]
			if !ok || t.ref != x.ref {
				panic("model: a fired timer's message outlived its cancel")
			}
			delete(m.timers, x.key)
			m.handle(x.key.event(t.msg))
		case Event:
			m.handle(x)
		}
	}
}

// TestCoreMatchesModel drives core and the reference model with the same
// drawn script and checks that they handle the same events in the same
// order and states. It fails on a core that re-queues postponed events
// newest first, one whose event timeout survives an event, and one that
// takes a stale timer message.
func TestCoreMatchesModel(t *testing.T) {
	rapid.Check(t, checkCoreMatchesModel)
}

func checkCoreMatchesModel(t *rapid.T) {
	impl := &implHarness{}
	model := &refModel{timers: map[timerKey]modelTimer{}}
	labels := 0
	steps := rapid.IntRange(1, 30).Draw(t, "steps")
	for i := range steps {
		if rapid.Bool().Draw(t, "send") {
			sp := drawSpec(t, 2, &labels)
			typ := []EventType{Cast, Info, Call}[rapid.IntRange(0, 2).Draw(t, "type")]
			ev := Event{Type: typ, Msg: sp}
			impl.mailbox = append(impl.mailbox, ev)
			model.mailbox = append(model.mailbox, ev)
		} else {
			dt := int64(rapid.IntRange(0, 3).Draw(t, "dt"))
			impl.advance(dt)
			model.advance(dt)
		}
		// Let the machines run only now and then, so mailboxes hold several
		// messages and fired timers (stale ones too) when they do.
		if rapid.IntRange(0, 2).Draw(t, "run") == 0 || i == steps-1 {
			impl.run()
			model.run()
		}
		if len(impl.out) >= maxHandled {
			break // a postpone loop; compared below
		}
		if !slices.Equal(impl.out, model.out) {
			t.Fatalf("handled events differ at step %d:\ncore:  %v\nmodel: %v", i, impl.out, model.out)
		}
		if impl.state != model.state {
			t.Fatalf("state %d, model %d", impl.state, model.state)
		}
	}
	// Advance past every deadline: what is still running fires alike.
	impl.advance(1 << 20)
	model.advance(1 << 20)
	impl.run()
	model.run()
	if !slices.Equal(impl.out, model.out) {
		t.Fatalf("handled events differ at the end:\ncore:  %v\nmodel: %v", impl.out, model.out)
	}
}
