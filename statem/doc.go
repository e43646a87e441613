// Package statem is OTP's gen_statem for Colony: a state machine whose
// callbacks handle one event at a time and say, with verbs on their
// Context, which state comes next and which actions to take.
//
// A machine is a Machine[S] (handle_event_function mode: one HandleEvent
// for every state, S any comparable type, a struct included) or a
// StateFunctions[S] adapted with Functions (state_functions mode: a handler
// per state). Implementing Enterer, or giving a State an Enter func, turns
// on state enter calls. The machine's data is the value that implements
// the interface, as a Server's state is: callbacks run one at a time in
// the machine's actor.
//
// A machine runs as an actor.Server (New adapts it), so everything that
// works on a Server works on it: Start and Spawn wait for Init as
// StartServer and SpawnServer do (same options and errors); actor.Call,
// CallName and Cast reach it (calls are Call events, casts Cast events,
// anything else Info); StopServer stops it through Terminate; supervisors
// start, restart and shut it down (supervisor.ServerStart with New); an
// Erlang node's gen_statem:call and gen_server:call reach it through dist
// as they reach a Server.
//
// Events and actions follow OTP 25's gen_statem (lib/stdlib/src/
// gen_statem.erl), checked against it by the differential scenarios in
// tests/gen_statem_diff_test.go:
//
//   - After a callback its actions run in the order they were set; then
//     the event just handled is postponed if Postpone was called; a state
//     change puts every postponed event back, oldest first, at the head of
//     the queue (NextState to the same state and RepeatState do not); the
//     events inserted with NextEvent go before them, first inserted first.
//   - Queued events are handled before the mailbox is read again; a zero
//     timeout fires once the queue is empty, before the mailbox.
//   - The event timeout is cancelled by any event (an inserted or a
//     postponed one too), the state timeout by a state change, a named
//     timeout only by the machine; setting one again restarts it, and the
//     last action for a timeout wins. A timer's message that was queued
//     before its timeout was cancelled or restarted is dropped.
//   - Stop sends the replies set with Reply, then Terminate runs
//     (stop_and_reply; note that this is the reverse of gen_server's
//     {stop, Reason, Reply, State}, whose reply follows terminate/2).
//   - An enter call may not Postpone, NextEvent or change to another
//     state: the machine stops with an *EnterError.
//   - Hibernate does nothing: a Colony actor keeps no stack to shrink.
//
// In colonytest's deterministic mode a machine's timeouts run on the
// virtual clock, as every actor timer does. docs/statem.md maps
// gen_statem's callbacks, results and actions to this API.
package statem
