package statem

// The machine's loop, run as an actor.Server.
//
// Design note.
//
// Problem. gen_statem is a receive loop of its own (gen_statem.erl's
// loop_*): it takes a message, runs the state callback, runs the actions
// in order, maybe an enter call, and then handles the queued events before
// it receives again. Colony already has that loop's outer half, the
// gen_server: the synchronous start, calls and casts told apart, the
// parent's exit and StopServer, Terminate on a stop or a crash, restarts
// under supervisors, '$gen_call' from Erlang nodes through dist.
//
// Rejected. (1) A receive loop of its own on a plain actor: it would
// duplicate all of the above and miss what the Server gains later.
// (2) Result values in OTP's shape ({next_state, S, D, Actions}): in Go the
// data lives in the receiver, as a Server's does, and a verb on the Context
// per result and per action reads better than a tuple builder (actor's
// Server design note rejects result tuples for the same reason).
//
// Protocol. server is an actor.Server. Its HandleCall, HandleCast and
// HandleInfo turn the message into an Event (a timerFired message into its
// timeout's event, or nothing if stale) and run: handle the event, then
// every event the core gives before the mailbox (queued, then zero
// timeouts), until none is left or the machine stops. A stop sends the
// replies set with Reply, then the actor's Stop: the Server's loop runs
// Terminate when the callback returns, so replies precede Terminate as in
// OTP's stop_and_reply. Init's transition, its enter call and its actions
// run in HandleContinue, after the starter has the pid, as OTP's
// init_ack precedes enter/8. A panic in a callback unwinds through the
// Server's loop, which runs Terminate with it: the state Terminate sees is
// the one the machine was in (term), as in OTP, where an exception drops
// the callback's result.

import (
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
)

// New adapts m to an actor.Server, to start with actor.StartServer,
// actor.SpawnServer or a supervisor's ServerStart. New(nil) is nil.
func New[S comparable](m Machine[S]) actor.Server {
	if m == nil {
		return nil
	}
	s := &server[S]{m: m}
	s.enter, _ = m.(Enterer[S])
	if f, ok := m.(stateFuncs[S]); ok && !f.enters() {
		s.enter = nil
	}
	return s
}

// Start starts m from outside the system (gen_statem:start) and waits for
// its Init; see actor.StartServer for the options and errors.
func Start[S comparable](sys *actor.System, m Machine[S], opts ...actor.ServerOption) (actor.Pid, error) {
	return actor.StartServer(sys, New(m), opts...)
}

// Spawn starts m linked to the calling actor (gen_statem:start_link) and
// waits for its Init; see actor.SpawnServer.
func Spawn[S comparable](c *actor.Context, m Machine[S], opts ...actor.ServerOption) (actor.Pid, error) {
	return actor.SpawnServer(c, New(m), opts...)
}

// server runs a Machine. Owner only: every field is touched by the
// machine's callbacks, one at a time.
type server[S comparable] struct {
	m     Machine[S]
	enter Enterer[S] // nil: no enter calls
	state S
	term  S // the state Terminate sees
	q     core
	c     Context[S]
	ac    *actor.Context // the actor's Context during a callback: backend
	init  []action       // Init's actions, run by HandleContinue
}

// Wrapped makes the runtime name the machine by the user's type
// (actor.Wrapper).
func (s *server[S]) Wrapped() any { return s.m }

// initCont is the Continue that runs Init's transition.
type initCont struct{}

func (s *server[S]) Init(c *actor.Context) error {
	s.c.reset(c)
	st, err := s.m.Init(&s.c)
	if err != nil {
		return err
	}
	if s.c.res != resKeep {
		panic("statem: Init may set actions, not a transition (NextState, RepeatState, Stop)")
	}
	s.state, s.term = st, st
	s.init = append([]action(nil), s.c.acts...)
	return actor.Continue(initCont{})
}

func (s *server[S]) HandleContinue(c *actor.Context, arg any) {
	if _, ok := arg.(initCont); !ok {
		return
	}
	acts := s.init
	s.init = nil
	s.ac = c
	var tr transition
	// Init's actions are a state callback's, with postpone off (OTP appends
	// {postpone, false}), followed by an enter call into the initial state.
	if !s.runActions(c, acts, &tr, false) {
		return
	}
	tr.postpone = false
	if !s.enterCalls(c, s.state, true, &tr) {
		return
	}
	s.q.commit(s, nil, &tr)
	s.drain(c)
}

func (s *server[S]) HandleCall(c *actor.Context, req actor.Request) {
	s.run(c, Event{Type: Call, Msg: req.Msg, Req: req})
}

func (s *server[S]) HandleCast(c *actor.Context, msg any) {
	s.run(c, Event{Type: Cast, Msg: msg})
}

func (s *server[S]) HandleInfo(c *actor.Context, msg any) {
	if f, ok := msg.(timerFired); ok {
		ev, live := s.q.fired(f)
		if !live {
			return // stale: cancelled or restarted after it fired
		}
		s.run(c, ev)
		return
	}
	s.run(c, Event{Type: Info, Msg: msg})
}

func (s *server[S]) Terminate(c *actor.Context, reason actor.Reason) {
	s.c.reset(c)
	s.m.Terminate(&s.c, reason, s.term)
}

// run handles ev, then the events due before the next message.
func (s *server[S]) run(c *actor.Context, ev Event) {
	s.ac = c
	if s.handle(c, ev) {
		s.drain(c)
	}
}

// drain handles queued events and zero timeouts until none is left or the
// machine stops.
func (s *server[S]) drain(c *actor.Context) {
	for {
		ev, ok := s.q.next()
		if !ok || !s.handle(c, ev) {
			return
		}
	}
}

// handle runs the state callback for ev and its transition. It reports
// false if the machine stops.
func (s *server[S]) handle(c *actor.Context, ev Event) bool {
	s.c.reset(c)
	s.term = s.state
	s.m.HandleEvent(&s.c, s.state, ev)
	next, callEnter := s.state, false
	switch s.c.res {
	case resStop:
		s.stop(c, s.c.acts, s.c.reason)
		return false
	case resNext:
		next, callEnter = s.c.next, s.c.next != s.state
	case resRepeat:
		callEnter = true
	}
	var tr transition
	if !s.runActions(c, s.c.acts, &tr, false) {
		return false
	}
	if !s.enterCalls(c, next, callEnter, &tr) {
		return false
	}
	tr.changed = next != s.state
	s.q.commit(s, &ev, &tr)
	s.state, s.term = next, next
	return true
}

// enterCalls runs the enter calls into next while they ask for one (a
// state change, then each RepeatState), adding their actions to tr. It
// reports false if the machine stops.
func (s *server[S]) enterCalls(c *actor.Context, next S, call bool, tr *transition) bool {
	for call && s.enter != nil {
		s.c.reset(c)
		s.term = s.state // a panic in Enter: the state not yet entered
		s.enter.Enter(&s.c, s.state, next)
		s.term = next
		call = false
		switch s.c.res {
		case resStop:
			s.stop(c, s.c.acts, s.c.reason)
			return false
		case resNext:
			if s.c.next != next {
				s.stop(c, nil, &EnterError{Action: "next_state", State: next, Target: s.c.next})
				return false
			}
		case resRepeat:
			call = true
		}
		if !s.runActions(c, s.c.acts, tr, true) {
			return false
		}
	}
	return true
}

// runActions runs acts in order: replies are sent, the rest recorded in tr.
// In an enter call, postpone and next_event stop the machine with an
// *EnterError, after the actions before them have run (as OTP's
// loop_actions_list). It reports false if the machine stops.
func (s *server[S]) runActions(c *actor.Context, acts []action, tr *transition, enter bool) bool {
	for _, a := range acts {
		switch a.kind {
		case actReply:
			reply(c, a)
		case actPostpone:
			if enter {
				s.stop(c, nil, &EnterError{Action: "postpone", State: s.term})
				return false
			}
			tr.postpone = true
		case actNextEvent:
			if enter {
				s.stop(c, nil, &EnterError{Action: "next_event", State: s.term, Event: a.ev})
				return false
			}
			tr.next = append(tr.next, a.ev)
		case actTimeout:
			tr.timeouts = append(tr.timeouts, a.to)
		}
	}
	return true
}

func reply(c *actor.Context, a action) {
	if a.err != nil {
		c.ReplyError(a.req, a.err)
		return
	}
	c.Reply(a.req, a.v)
}

// stop sends the replies among acts, in order, and stops the actor: the
// Server's loop runs Terminate when the callback returns.
func (s *server[S]) stop(c *actor.Context, acts []action, reason actor.Reason) {
	for _, a := range acts {
		if a.kind == actReply {
			reply(c, a)
		}
	}
	c.Stop(reason)
}

// startTimer and cancelTimer make the server the core's backend: a timer
// is a message to self on the actor's timers (virtual in colonytest's
// deterministic mode).
func (s *server[S]) startTimer(m timerFired, d time.Duration) actor.TimerRef {
	ref, err := s.ac.SendAfter(s.ac.Self(), m, d)
	if err != nil {
		panic(fmt.Sprintf("statem: cannot start a timer: %v", err)) // a broken invariant: self is alive
	}
	return ref
}

func (s *server[S]) cancelTimer(_ uint64, ref actor.TimerRef) { s.ac.CancelTimer(ref) }
