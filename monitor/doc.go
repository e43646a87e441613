// Package monitor keeps an actor's links and monitors and decides what an
// exit signal does to the actor that receives it: the bookkeeping and the
// rules behind OTP's link/1, monitor/2, exit/2 and process_flag(trap_exit).
//
// The package is a floor-1 mechanism: it knows nothing of actors. It is
// generic over the pid type P (any comparable type) and over exit reasons,
// which the actor package classifies into a Kind. It has three parts:
//
//   - Node, the per-actor record of links, monitors held on the actor, and
//     monitors the actor holds on others. Close, at the actor's death,
//     returns all of them exactly once and makes every later Add fail.
//   - Route, the exit-signal routing rules: ignore, deliver as an Exit
//     message, or die (with the signal's reason or with killed).
//   - Refs, the generator of monitor references.
//
// # The OTP semantics it encodes (OTP 25, checked with erl)
//
//   - exit(Pid, kill) cannot be trapped: Pid dies with killed.
//   - A trapping process receives every other exit signal as an Exit message.
//   - normal is ignored by a process that does not trap exits, except that
//     exit(self(), normal) terminates the caller with reason normal.
//   - Any other reason kills a non-trapping receiver with the same reason;
//     that includes a link exit signal carrying kill (from a process that
//     called exit(kill) on itself), which kills peers with kill, and killed,
//     which peers of a killed process receive.
//   - Links are a set: linking twice and unlinking once leaves no link.
//   - Monitoring a dead pid gives Down with reason noproc at once
//     (AddMonitor reports false; the caller sends the Down).
//   - Linking a dead pid (Link reports PeerDead): a caller that
//     traps exits gets an Exit message {'EXIT', Pid, noproc}, which is
//     Route(Signal{Kind: Other, Link: true}, true, false); a caller that does
//     not trap exits gets the error noproc from link/1 itself, which in
//     Erlang kills it with {noproc, Stack} unless it catches the error.
//
// # Linking two actors
//
// A link has a half in each actor's Node. Link(A, a, B, b) and Unlink(A, a,
// B, b) (A the caller's Node, a its pid) change both halves in one critical
// section under both nodes' locks, taken in address order, so two
// operations on one pair never leave one half behind. Link reports
// SelfDead if A is closed (the caller died meanwhile), PeerDead if B is
// (the noproc case above), and makes nothing in either case.
//
// A death closes one Node at a time: Close returns the dead actor's peers,
// and for each its runtime calls RemoveLinkThen(dead, signal) on the peer's
// Node, which reports whether the link was still there; if it was, the exit
// signal is routed with Route and delivered by signal, under the peer's
// lock, so an Unlink by the peer returns either before the removal (the
// signal is dropped: the unlink protocol of OTP 23+) or after the delivery
// (unlink/1: once it returns the link has no effect on the caller). Between the
// Close and that RemoveLink only the peer holds its half. Unlink by the dead
// actor (a handler still running after its actor was killed) then changes
// nothing, since a dead process cannot unlink and the signal must go out;
// Unlink by the peer removes its half, and the signal is dropped.
//
// A monitor by A on B is ref := refs.Next(), then B.AddMonitor(ref, A)
// (false: send A a Down{noproc} now), then A.AddWatching(ref, B) (false: A
// died meanwhile; undo with B.RemoveMonitor(ref)). Demonitor(ref) is
// target, ok := A.RemoveWatching(ref), then target's RemoveMonitor(ref).
package monitor
