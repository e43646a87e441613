// Package sysmsg is OTP's sys module for Colony's behaviours: it reads
// and replaces a running Server's state, reports its status, suspends and
// resumes it, stops it as gen_server:stop does, and turns on its debug
// options (trace, log, statistics). Every function sends a system message
// (an actor.SysRequest) that the process answers between two of its
// callbacks, in mailbox order: a GetState sent after a Cast sees the
// cast's effect. A Server (actor.Server, actor.Typed, a supervisor)
// answers them with no code of its own; a behaviour built on actor.Actor
// answers them by handing them to an actor.SysProc.
//
// c is the caller: a handler's *actor.Context (its wait hands the
// scheduler role on, as a Call's does) or the *actor.System from plain Go
// code. A pid that is alive but is not such a behaviour is
// actor.ErrNotServer; a dead one actor.ErrNoProc. The other errors are a
// Call's: actor.ErrTimeout, actor.ErrCallSelf, ...
//
// A remote pid (an Erlang process, or a behaviour on another Colony node)
// is reached through the node's route as sys reaches it: GetState answers
// the peer's term, Suspend, Resume, Stop and the debug switches work as
// locally; GetStatus, GetLog and GetStatistics answer an error, since the
// answer is a term (actor.SysCall returns it as it came); ReplaceState
// fails, since a Go func does not travel.
//
// The same requests come from Erlang and Elixir nodes (sys:get_state,
// gen_server:stop, GenServer.stop, ...) through package dist; the docs'
// distribution page lists what is answered to them.
package sysmsg
