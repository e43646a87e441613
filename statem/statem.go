package statem

import (
	"errors"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
)

// EventType is the kind of an Event (gen_statem's event_type()).
type EventType uint8

const (
	// Call is a call made with actor.Call (or gen_statem:call from an
	// Erlang node): {call, From}. Answer Event.Req with Context.Reply.
	Call EventType = iota + 1
	// Cast is a message sent with actor.Cast: cast.
	Cast
	// Info is any other message: info.
	Info
	// Timeout is the event timeout (timeout): set with
	// Context.EventTimeout, cancelled by any event.
	Timeout
	// StateTimeout is the state timeout (state_timeout): set with
	// Context.StateTimeout, cancelled by a state change.
	StateTimeout
	// GenericTimeout is a named timeout ({timeout, Name}); Event.Name is
	// its name. Only the machine cancels it.
	GenericTimeout
	// Internal is an event the machine inserted with NextEvent (internal).
	Internal
)

func (t EventType) String() string {
	switch t {
	case Call:
		return "call"
	case Cast:
		return "cast"
	case Info:
		return "info"
	case Timeout:
		return "timeout"
	case StateTimeout:
		return "state_timeout"
	case GenericTimeout:
		return "generic_timeout"
	case Internal:
		return "internal"
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// Event is what a state callback handles: its type and content. For a Call,
// Msg is the request (Req.Msg) and Req is what to answer; for a timeout,
// Msg is the message the timeout was set with. It is a small value and may
// be copied and kept.
type Event struct {
	Type EventType
	Msg  any
	Req  actor.Request // Call only
	Name string        // GenericTimeout only: the timeout's name
}

// String formats e for people, as "type: msg".
func (e Event) String() string {
	if e.Type == GenericTimeout {
		return fmt.Sprintf("timeout %s: %v", e.Name, e.Msg)
	}
	return fmt.Sprintf("%v: %v", e.Type, e.Msg)
}

// Timer names one of a machine's timeouts, for StartTimeout, UpdateTimeout
// and CancelTimeout: EventTimer, StateTimer, or a NamedTimer. It is a small
// comparable value; the zero Timer names none, and the verbs panic on it.
type Timer struct{ key timerKey }

var (
	// EventTimer is the event timeout (gen_statem's timeout).
	EventTimer = Timer{timerKey{typ: Timeout}}
	// StateTimer is the state timeout (state_timeout).
	StateTimer = Timer{timerKey{typ: StateTimeout}}
)

// NamedTimer is the generic timeout called name ({timeout, Name}).
func NamedTimer(name string) Timer { return Timer{timerKey{typ: GenericTimeout, name: name}} }

// Machine is a gen_statem in handle_event_function mode: one callback for
// every event, with the state (any comparable value: a named string or int
// type, a struct) passed in. The machine's data is the value implementing
// Machine, as a Server's state is: callbacks run one at a time in the
// machine's actor and change it in place. Start one with Start, Spawn or
// New. For a handler per state (state_functions mode), see Functions.
//
//   - Init returns the initial state; an error ends the start as
//     actor.Server.Init's error does (actor.ErrIgnore, actor.Stop(reason)).
//     It may set actions on c (timeouts, NextEvent, Reply) as init/1's
//     {ok, State, Data, Actions}; the starter gets the pid before any of
//     them runs, and before the first enter call.
//   - HandleEvent handles one event in state. It decides the transition
//     with c's verbs: NextState, RepeatState, Stop, or none (keep_state);
//     and the actions: Postpone, NextEvent, Reply, timeouts, Hibernate.
//   - Terminate runs once when the machine stops (Stop, a panic in a
//     callback, a stop or exit from its parent), with the state it was in,
//     as actor.Server's Terminate does.
//
// A Machine that also implements Enterer gets state enter calls.
type Machine[S comparable] interface {
	Init(c *Context[S]) (S, error)
	HandleEvent(c *Context[S], state S, ev Event)
	Terminate(c *Context[S], reason actor.Reason, state S)
}

// Enterer is implemented by a Machine that wants state enter calls
// (callback_mode's state_enter): Enter runs when the machine enters a state,
// first after Init (old is then the initial state), then after every state
// change and RepeatState. It may keep the state (NextState to the state it
// entered is allowed), RepeatState (enter again), Stop, Reply and set
// timeouts; Postpone, NextEvent or a NextState to another state stop the
// machine with an *EnterError, as OTP's enter calls may not do them.
type Enterer[S comparable] interface {
	Enter(c *Context[S], old, state S)
}

// ErrBadEnter is what errors.Is finds in an *EnterError.
var ErrBadEnter = errors.New("statem: bad action in a state enter call")

// EnterError is the exit reason of a machine whose enter call did what an
// enter call may not: Action is "postpone", "next_event" or "next_state"
// (a change to another state), State the state being entered, Event the
// next event it tried to insert (next_event only), Target the state it
// tried to change to (next_state only). OTP's reasons are
// {bad_state_enter_action_from_state_function, Action} and
// {bad_state_enter_return_from_state_function, Result}.
type EnterError struct {
	Action string
	State  any
	Event  Event
	Target any
}

func (e *EnterError) Error() string {
	switch e.Action {
	case "next_state":
		return fmt.Sprintf("statem: the enter call of state %v changed state to %v", e.State, e.Target)
	case "next_event":
		return fmt.Sprintf("statem: the enter call of state %v inserted an event (%v)", e.State, e.Event)
	}
	return fmt.Sprintf("statem: the enter call of state %v did %s", e.State, e.Action)
}

func (e *EnterError) Unwrap() error { return ErrBadEnter }

// resultKind is the transition a callback chose.
type resultKind uint8

const (
	resKeep resultKind = iota
	resNext
	resRepeat
	resStop
)

type actionKind uint8

const (
	actReply actionKind = iota
	actPostpone
	actNextEvent
	actTimeout
)

// action is one action set by a callback, kept in the order it was set.
type action struct {
	kind actionKind
	req  actor.Request // actReply
	v    any           // actReply
	err  error         // actReply: a ReplyError
	ev   Event         // actNextEvent
	to   timeoutAction // actTimeout
}

// Context is a state callback's handle: the actor's Context (embedded:
// Self, Send, Call, Monitor, ... work as in any actor) and the verbs that
// set the callback's transition and actions. Reply and Stop are the state
// machine's verbs, not the actor's (see each). A Context is valid only
// during the callback it was passed to; do not keep or copy it.
type Context[S comparable] struct {
	*actor.Context
	res    resultKind
	next   S
	reason actor.Reason
	acts   []action
}

func (c *Context[S]) reset(ac *actor.Context) {
	var zero S
	c.Context, c.res, c.next, c.reason = ac, resKeep, zero, nil
	clear(c.acts)
	c.acts = c.acts[:0]
}

// NextState makes the machine go to state s when the callback returns
// ({next_state, S, Data}). To the state it is in, it is keep_state: no
// enter call, postponed events stay postponed. The last of NextState,
// KeepState, RepeatState and Stop called wins.
func (c *Context[S]) NextState(s S) { c.res, c.next = resNext, s }

// KeepState keeps the state (keep_state): what a callback that calls no
// transition verb does.
func (c *Context[S]) KeepState() { c.res = resKeep }

// RepeatState keeps the state but runs its enter call again
// (repeat_state); postponed events stay postponed, the state timeout
// runs on.
func (c *Context[S]) RepeatState() { c.res = resRepeat }

// Stop stops the machine with reason when the callback returns: the
// replies set with Reply are sent first, in order, then Terminate runs
// ({stop_and_reply, Reason, Replies}, or {stop, Reason} with none); every
// other action is dropped. It is the state machine's stop, which hides the
// actor's Context.Stop: call this one (c.Context.Stop would let the machine
// handle its queued events before it stops).
func (c *Context[S]) Stop(reason actor.Reason) {
	if reason == nil {
		reason = actor.Normal
	}
	c.res, c.reason = resStop, reason
}

// Postpone postpones the event being handled ({postpone, true}): it is
// handled again after the next state change, after the events postponed
// before it. Not in an enter call.
func (c *Context[S]) Postpone() { c.acts = append(c.acts, action{kind: actPostpone}) }

// NextEvent inserts an event of type t with content msg, to be handled
// before any queued or mailbox event ({next_event, Type, Content}); the
// events of one callback are handled in the order it inserted them. t may
// not be Call (a call needs its Request: use Insert). Not in an enter
// call.
func (c *Context[S]) NextEvent(t EventType, msg any) {
	if t == Call || t == GenericTimeout || t < Call || t > Internal {
		panic(fmt.Sprintf("statem: NextEvent of type %v (use Insert for a Call or a GenericTimeout event)", t))
	}
	c.Insert(Event{Type: t, Msg: msg})
}

// Insert is NextEvent for a whole Event: a call re-inserted with its
// Request, a GenericTimeout with its name.
func (c *Context[S]) Insert(ev Event) {
	if ev.Type < Call || ev.Type > Internal {
		panic(fmt.Sprintf("statem: Insert of an event of type %v", ev.Type))
	}
	c.acts = append(c.acts, action{kind: actNextEvent, ev: ev})
}

// Reply answers a call with v when the callback returns ({reply, From,
// Reply}), in order with the other actions; a callback that panics sends
// none. For an answer at once, use the actor's Context.Reply
// (gen_statem:reply/2): c.Context.Reply(req, v).
func (c *Context[S]) Reply(req actor.Request, v any) {
	c.acts = append(c.acts, action{kind: actReply, req: req, v: v})
}

// ReplyError is Reply with an error for the caller. A nil err panics (a
// success is Reply).
func (c *Context[S]) ReplyError(req actor.Request, err error) {
	if err == nil {
		panic("statem: ReplyError with a nil error (answer a success with Reply)")
	}
	c.acts = append(c.acts, action{kind: actReply, req: req, err: err})
}

// EventTimeout sets the event timeout: a Timeout event with msg after d,
// unless an event comes first ({timeout, Time, Msg}). d may be 0: it
// fires once the queued events are handled, before the mailbox; Infinity
// cancels it.
func (c *Context[S]) EventTimeout(d time.Duration, msg any) { c.StartTimeout(EventTimer, d, msg) }

// StateTimeout sets the state timeout: a StateTimeout event with msg after
// d, unless the state changes first ({state_timeout, Time, Msg}).
func (c *Context[S]) StateTimeout(d time.Duration, msg any) { c.StartTimeout(StateTimer, d, msg) }

// StartTimeout starts (or restarts) timeout t to fire after d with msg;
// Infinity cancels it. A negative d panics.
func (c *Context[S]) StartTimeout(t Timer, d time.Duration, msg any) {
	if d < 0 {
		panic(fmt.Sprintf("statem: negative timeout %v", d))
	}
	c.timeout(t, opStart, d, msg)
}

// UpdateTimeout changes the message timeout t fires with, leaving its
// time ({T, update, Msg}); a timeout that is not running fires at once,
// as one set to 0.
func (c *Context[S]) UpdateTimeout(t Timer, msg any) { c.timeout(t, opUpdate, 0, msg) }

// CancelTimeout cancels timeout t ({T, cancel}).
func (c *Context[S]) CancelTimeout(t Timer) { c.timeout(t, opCancel, 0, nil) }

func (c *Context[S]) timeout(t Timer, op timerOp, d time.Duration, msg any) {
	if t.key.typ == 0 {
		panic("statem: the zero Timer (use EventTimer, StateTimer or NamedTimer)")
	}
	c.acts = append(c.acts, action{kind: actTimeout, to: timeoutAction{key: t.key, op: op, d: d, msg: msg}})
}

// Hibernate is gen_statem's hibernate action. A Colony actor holds no
// stack between messages, so there is nothing to shrink: it does nothing.
func (c *Context[S]) Hibernate() {}
