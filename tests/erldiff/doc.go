// Package erldiff runs differential tests against a real Erlang node.
//
// OTP's observable semantics are Colony's specification (DESIGN.md §6). A
// scenario is written twice: once as an Erlang escript under
// tests/testdata/erlang/ and once in Go against the actor and supervisor
// packages. Both print a trace in the format below; a test runs the escript
// live with [Run], runs the Go side, and checks the two traces with
// [Compare]. The *.trace file next to each escript is the Erlang output
// checked in for review and for spotting non-determinism; the live run is
// the reference, and TestGoldenFiles fails when the two drift apart (rewrite
// them with `go test ./tests/erldiff -run TestGoldenFiles -update`).
//
// When escript is not on PATH, Run skips the test with a loud message, unless
// the environment variable CI is non-empty: then the test fails, because CI
// must install erlang-nox.
//
// # Trace format
//
// One event per line; words separated by a single space; no leading or
// trailing space; no comments. Every term is printed as Erlang's ~w prints it
// (no spaces inside tuples and lists: {shutdown,x}, [flush,info],
// {error,{already_started,w1}}; atoms that need quotes keep them: 'DOWN',
// 'EXIT'), after two substitutions:
//
//   - A process is printed by its symbolic name, never as a raw pid. The test
//     process is main; others are named by the scenario (a, b, c, d, k, q,
//     ...) or, for supervisor trees, by their supervisor or child id (sup,
//     top, sub, w1, t3, d17, ...). A restarted child keeps its id as its
//     name. The Go side uses the same names.
//   - A monitor reference is printed as m1, m2, ... numbered in the order the
//     test creates its monitors (counting every monitor the scenario creates
//     through its helper, printed or not).
//
// Reasons are printed canonically: normal, shutdown, {shutdown,x}, killed
// (the reason of a process killed by exit(P, kill)), kill (the reason of a
// process that called exit(kill) itself, and what its links see), noproc, or
// a user term such as boom. A Go panic would be {panic,Value,Stack} and is
// not used by these scenarios, whose crashes all use exit(boom) or a
// gen_server {stop, boom}.
//
// The Erlang side prints raw pids as unnamed_pid, raw refs as unnamed_ref
// and unnamed sockets as unnamed_sock if it ever meets one without a name; Run rejects such lines, and any line
// that contains a raw pid (<0.), ref, fun, port or an escript module name.
//
// # Events
//
// Observations made by main (the only process that prints in the link
// scenarios, so their traces have one order):
//
//	down M P R          main's monitor M fired: P died with reason R (R is
//	                    noproc if P was already dead when monitored)
//	exit X P R          trapping process X received {'EXIT', P, R}
//	recv X Msg          process X received the plain message Msg
//	mailbox empty       main's mailbox is empty at this point
//	mailbox X Msg       Msg is still in X's mailbox (one line per message,
//	                    in mailbox order)
//	alive P true|false  is_process_alive(P)
//	links P [Q,...]     P's link set
//
// Results of calls: the operation, its arguments, then the result, where an
// error raised by a BIF is printed as its reason without the stack (badarg,
// noproc):
//
//	link A B true|noproc     A called link(B)
//	unlink A B true
//	exit2 P R true           main called exit(P, R)
//	demonitor M [Opts] true|false
//	register Name P true|badarg
//	unregister Name true|badarg
//	whereis Name P|undefined
//	send Name|P ok|badarg    Name ! Msg (ok: the send did not raise)
//	call A Result            a round trip through A returned Result
//
// Supervisor scenarios add the events of the workers, printed by the worker
// itself, and the results of supervisor calls (process names in results are
// substituted as above; undefined stays undefined):
//
//	start W             worker W's init succeeded
//	stop W R            worker W's terminate ran with reason R (workers
//	                    trap exits; brutal_kill and a kill after the
//	                    shutdown timeout print nothing)
//	stalling W          W's terminate is deliberately stalling
//	released W          main released W's stalled terminate
//	start_link S ok     the supervisor S started
//	start_link S {error,Reason}
//	start_child S W {ok,W}, start_child W {error,...}, start_child W error R
//	which_children S [{Id,Child,Type,Modules},...]   (sorted by id unless the
//	                    scenario says otherwise; Modules is [worker] or [sup])
//	count_children S [{specs,N},{active,N},{supervisors,N},{workers,N}]
//	terminate_child Id ok|{error,not_found}|{error,simple_one_for_one}
//	restart_child Id {ok,W}|{error,running}|{error,not_found}
//	delete_child Id ok|{error,running}|{error,not_found}
//	same_pid W true|false   W's pid is (not) the one it had before
//
// Process-group and registry scenarios (pg/) add, all printed by main (By
// is the process that made the call: main, or a scenario process through
// call/2):
//
//	join By G P ok           By called pg:join(G, P) (Go: JoinGroup)
//	leave By G P ok|not_joined
//	members G [P,...]        pg:get_members(G), sorted by name (pg documents
//	                         no order), once no member it lists is dead
//	registered [Name,...]    registered() less the names held before the
//	                         scenario began (pg's own included), sorted
//	registered_name P Name|[]|undefined
//	                         process_info(P, registered_name)
//	start Id Name R          a gen_server started with {local, Name} (Go: a
//	                         spawn with the Name option): ok, ignore,
//	                         {error,already_started} or {error,Reason}
//
// Socket scenarios (tcp/) name sockets like processes (ls, ss, cs, ...) and
// print data only as its size and CRC-32, never as bytes; P is the process
// that made the call or took the message, S the socket, R a gen_tcp result
// ({ok,Size,Crc} for received data, ok, {error,Atom}):
//
//	listen S R / connect P S R / accept main S R
//	send P S Size R / recv P S R / setopts P S {active,A} R
//	close P S R / shutdown P S R / controlling_process P S To R
//	recv_all P S Size Crc {error,Atom}   recv(S, 0) until an error
//	tcp P S Size Crc / tcp_closed P S / tcp_error P S R / tcp_passive P S
//	tcp_all main S Size Crc   active-once input up to tcp_closed, added up
//	quiet main                no message came in 50 ms
//	send_until_error P S {error,Atom}
//
// State machine scenarios (gen_statem/) add the reports of the machine,
// printed by main (Sm is the machine's name, S and Old states, Label an
// event content's label; see tests/testdata/erlang/colony_statem.hrl):
//
//	init Sm S / enter Sm Old S / event Sm S Type Label / terminate Sm R S
//	call Sm Label Result      gen_statem:call returned Result, or {exit,R}
//	stop Sm ok                gen_statem:stop returned ok
//
// Any other line is specific to one scenario and explained in the scenario's
// escript and in tests/testdata/erlang/README.md.
package erldiff
