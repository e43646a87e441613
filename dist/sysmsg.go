package dist

// System messages from peer nodes: sys:get_state, sys:get_status,
// sys:suspend, gen_server:stop, ... sent to a Colony behaviour.
//
// sys sends {system, {From, Tag}, Req} with gen:call, exactly as a
// '$gen_call' with another label, and waits for {Tag, Answer} sent as
// gen:reply/2 sends it. For a local actor that answers system messages
// (actor.System.AnswersSys: a Server, a supervisor, a behaviour with an
// actor.SysProc) the request becomes an actor.SysRequest, delivered as a
// call (System.SendRequest), in mailbox order with the actor's other
// messages; its answer is turned into the term OTP's sys module answers
// and replied through genReply. To any other actor the tuple is delivered
// as it came, as to an Erlang process that is no behaviour.
//
// The other way, a SysRequest called on a remote pid (actor.SysCall, the
// functions of package sysmsg) goes out as {system, From, Req}, and its
// answer is the peer's term, as sys gives it to an Erlang caller. A
// replace_state cannot go: a Go func does not travel.
//
// Erlang funs cannot run on a Go node: sys:replace_state's fun is answered
// as a fun whose module is not loaded (the callback fails with undef, the
// state is left as it was), and sys:install's is unknown_debug, as is
// log_to_file, which would have the node open a file a peer names.

import (
	"errors"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

var (
	sysAtomSystem    = actor.Atom("system")
	sysAtomOK        = actor.Atom("ok")
	sysAtomUndef     = actor.Atom("undef")
	sysAtomDebug     = actor.Atom("debug")
	sysAtomTrue      = actor.Atom("true")
	sysAtomFalse     = actor.Atom("false")
	sysAtomGet       = actor.Atom("get")
	sysAtomUndefined = actor.Atom("undefined")
)

// sysMsg takes an incoming {system, {From, Tag}, Req} (t) for the local
// actor to, if to answers system messages; it reports whether it did.
//
// A system message whose From is not {Pid, Tag} cannot be answered: to an
// actor that answers system messages it is dropped (counted in
// Stats.Dropped), so that no {system, ...} tuple reaches a behaviour's
// callbacks (an Erlang gen_server would crash on it in gen:reply).
func (n *Node) sysMsg(to actor.Pid, t etf.Tuple) bool {
	if !n.sys.AnswersSys(to) {
		return false
	}
	from, ok := t[1].(etf.Tuple)
	var caller actor.Pid
	if ok && len(from) == 2 {
		caller, ok = from[0].(actor.Pid)
	}
	if !ok || len(from) != 2 {
		n.stats.dropped.Add(1)
		return true
	}
	tag, reqTerm := from[1], t[2]
	req := sysRequest(reqTerm)
	err := n.sys.SendRequest(to, caller, req, func(v any, err error) {
		n.genReply(to, caller, tag, n.sysAnswer(req, reqTerm, v, err), nil)
	})
	if err != nil {
		n.stats.dropped.Add(1) // dead: the caller's monitor says noproc
	} else {
		n.stats.received.Add(1)
	}
	return true
}

// sysRequest is the SysRequest of a request term, SysUnknown if it is none
// a Go node answers.
func sysRequest(v any) actor.SysRequest {
	unknown := actor.SysRequest{Op: actor.SysUnknown, Term: v}
	switch v {
	case actor.Atom("suspend"):
		return actor.SysRequest{Op: actor.SysSuspend}
	case actor.Atom("resume"):
		return actor.SysRequest{Op: actor.SysResume}
	case actor.Atom("get_state"):
		return actor.SysRequest{Op: actor.SysGetState}
	case actor.Atom("get_status"):
		return actor.SysRequest{Op: actor.SysGetStatus}
	}
	t, ok := v.(etf.Tuple)
	if !ok || len(t) != 2 {
		return unknown
	}
	switch t[0] {
	case actor.Atom("terminate"):
		return actor.SysRequest{Op: actor.SysTerminate, Reason: localReason(t[1])}
	case actor.Atom("replace_state"):
		// An Erlang fun cannot run here: it fails as one whose module is
		// not loaded would, and the state stays as it was.
		return actor.SysRequest{Op: actor.SysReplaceState, Replace: func(any) any { panic(sysAtomUndef) }}
	case sysAtomDebug:
		return debugRequest(t[1], unknown)
	}
	return unknown
}

// debugRequest is the SysRequest of {debug, What}.
func debugRequest(what any, unknown actor.SysRequest) actor.SysRequest {
	if what == actor.Atom("no_debug") {
		return actor.SysRequest{Op: actor.SysNoDebug}
	}
	t, ok := what.(etf.Tuple)
	if !ok || len(t) != 2 {
		return unknown
	}
	flag := func(v any) actor.SysFlag {
		switch v {
		case sysAtomTrue, true: // the decoder's true and false are bools
			return actor.SysOn
		case sysAtomFalse, false:
			return actor.SysOff
		case sysAtomGet:
			return actor.SysGet
		case actor.Atom("print"):
			return actor.SysPrint
		}
		return 0
	}
	switch t[0] {
	case actor.Atom("trace"):
		if f := flag(t[1]); f == actor.SysOn || f == actor.SysOff {
			return actor.SysRequest{Op: actor.SysTrace, Flag: f}
		}
	case actor.Atom("log"):
		if f := flag(t[1]); f != 0 {
			return actor.SysRequest{Op: actor.SysLog, Flag: f}
		}
		// {true, N}, 1 =< N; a bound on N keeps a peer from sizing the log.
		if tn, ok := t[1].(etf.Tuple); ok && len(tn) == 2 && (tn[0] == sysAtomTrue || tn[0] == true) {
			if n, ok := tn[1].(int); ok && n >= 1 && n <= maxSysLog {
				return actor.SysRequest{Op: actor.SysLog, Flag: actor.SysOn, N: n}
			}
		}
	case actor.Atom("statistics"):
		if f := flag(t[1]); f == actor.SysOn || f == actor.SysOff || f == actor.SysGet {
			return actor.SysRequest{Op: actor.SysStatistics, Flag: f}
		}
	}
	return unknown
}

// maxSysLog bounds the events a peer may ask a log to keep.
const maxSysLog = 10000

// sysAnswer is the term sys expects for the answer (v, err) to req, whose
// term was reqTerm.
func (n *Node) sysAnswer(req actor.SysRequest, reqTerm, v any, err error) any {
	if err != nil {
		if ce, ok := err.(*actor.SysCallbackError); ok {
			return etf.Tuple{atomError, etf.Tuple{actor.Atom("callback_failed"),
				etf.Tuple{actor.Atom("gen_server"), actor.Atom("system_replace_state")},
				etf.Tuple{atomError, n.term(ce.Value)}}}
		}
		if t, ok := reqTerm.(etf.Tuple); ok && len(t) == 2 && t[0] == sysAtomDebug {
			return actor.Atom("unknown_debug")
		}
		return etf.Tuple{atomError, etf.Tuple{actor.Atom("unknown_system_msg"), reqTerm}}
	}
	switch req.Op {
	case actor.SysGetState, actor.SysReplaceState:
		return n.term(v)
	case actor.SysGetStatus:
		st, _ := v.(actor.SysStatus)
		return n.statusTerm(st)
	case actor.SysLog:
		if req.Flag == actor.SysGet {
			ev, _ := v.([]actor.SysEvent)
			return etf.Tuple{sysAtomOK, n.eventsTerm(ev)}
		}
	case actor.SysStatistics:
		if req.Flag == actor.SysGet {
			st, _ := v.(*actor.SysStats)
			if st == nil {
				return etf.Tuple{sysAtomOK, actor.Atom("no_statistics")}
			}
			return etf.Tuple{sysAtomOK, []any{
				etf.Tuple{actor.Atom("start_time"), dateTime(st.Start)},
				etf.Tuple{actor.Atom("current_time"), dateTime(st.Now)},
				etf.Tuple{actor.Atom("reductions"), 0},
				etf.Tuple{actor.Atom("messages_in"), st.In},
				etf.Tuple{actor.Atom("messages_out"), st.Out},
			}}
		}
	}
	return sysAtomOK
}

// term is v as a term: itself if it has a term form, else its text (%+v,
// a binary), as a state's text is in a status. A zero Pid is undefined.
func (n *Node) term(v any) any {
	if p, ok := v.(actor.Pid); ok && p.IsZero() {
		return sysAtomUndefined
	}
	if sd, ok := v.(interface{ StateAndData() (any, any) }); ok {
		state, data := sd.StateAndData() // a gen_statem's {State, Data}
		return etf.Tuple{n.term(state), n.term(data)}
	}
	if _, err := n.enc.Append(nil, v); err == nil {
		return v
	}
	if err, ok := v.(error); ok {
		return err.Error()
	}
	return fmt.Sprintf("%+v", v)
}

// statusTerm is OTP's answer to sys:get_status for a gen_server:
// {status, Pid, {module, gen_server}, [PDict, SysState, Parent, Debug,
// [{header, H}, {data, [{"Status", S}, {"Parent", P}, {"Logged events",
// L}]}, {data, [{"State", State}]}]]}. The process dictionary is empty
// (Go has none); a server with no parent names itself, as OTP's started
// with gen_server:start does.
func (n *Node) statusTerm(st actor.SysStatus) any {
	sysState := actor.Atom("running")
	if st.Suspended {
		sysState = actor.Atom("suspended")
	}
	parent := st.Parent
	if parent.IsZero() {
		parent = st.Pid
	}
	behaviour := st.Behaviour
	if behaviour == "" {
		behaviour = "gen_server"
	}
	header := "Status for generic server "
	if behaviour == "gen_statem" {
		header = "Status for state machine "
	}
	if st.Name != "" {
		header += st.Name
	} else {
		header += st.Pid.String()
	}
	var debug []any
	if st.Trace {
		debug = append(debug, etf.Tuple{actor.Atom("trace"), sysAtomTrue})
	}
	if st.LogOn {
		debug = append(debug, etf.Tuple{actor.Atom("log"), n.eventsTerm(st.Log)})
	}
	if s := st.Statistics; s != nil {
		debug = append(debug, etf.Tuple{actor.Atom("statistics"),
			etf.Tuple{dateTime(s.Start), etf.Tuple{actor.Atom("reductions"), 0}, s.In, s.Out}})
	}
	if debug == nil {
		debug = []any{}
	}
	misc := []any{
		etf.Tuple{actor.Atom("header"), charlist(header)},
		etf.Tuple{actor.Atom("data"), []any{
			etf.Tuple{charlist("Status"), sysState},
			etf.Tuple{charlist("Parent"), parent},
			etf.Tuple{charlist("Logged events"), n.eventsTerm(st.Log)},
		}},
		etf.Tuple{actor.Atom("data"), []any{etf.Tuple{charlist("State"), n.term(st.State)}}},
	}
	return etf.Tuple{actor.Atom("status"), st.Pid, etf.Tuple{actor.Atom("module"), actor.Atom(behaviour)},
		[]any{[]any{}, sysState, parent, debug, misc}}
}

// eventsTerm is a log as sys:log(Name, get) gives it: {in, Msg}, {out,
// Reply, {To, undefined}, State}, {noreply, State}; a call's Msg is
// {'$gen_call', {From, undefined}, Req} and a cast's {'$gen_cast', Msg}
// (the tag of a call is not kept).
func (n *Node) eventsTerm(ev []actor.SysEvent) []any {
	out := make([]any, 0, len(ev))
	for _, e := range ev {
		switch e.Kind {
		case actor.SysIn:
			m := n.term(e.Msg)
			switch {
			case e.Call:
				m = etf.Tuple{atomGenCall, etf.Tuple{n.term(e.From), sysAtomUndefined}, m}
			case e.Cast:
				m = etf.Tuple{atomGenCast, m}
			}
			out = append(out, etf.Tuple{actor.Atom("in"), m})
		case actor.SysOut:
			out = append(out, etf.Tuple{actor.Atom("out"), n.term(e.Msg),
				etf.Tuple{n.term(e.From), sysAtomUndefined}, n.term(e.State)})
		case actor.SysNoReply:
			out = append(out, etf.Tuple{actor.Atom("noreply"), n.term(e.State)})
		}
	}
	return out
}

// dateTime is t as calendar:datetime(), local time.
func dateTime(t time.Time) etf.Tuple {
	t = t.Local()
	return etf.Tuple{
		etf.Tuple{t.Year(), int(t.Month()), t.Day()},
		etf.Tuple{t.Hour(), t.Minute(), t.Second()},
	}
}

// ErrSysReplaceRemote: a replace_state on a remote process: a Go func
// cannot run on another node.
var ErrSysReplaceRemote = errors.New("dist: replace_state on another node: a Go func does not travel")

// sysRequestTerm is the term sys sends for req.
func (n *Node) sysRequestTerm(req actor.SysRequest) (any, error) {
	flag := func(f actor.SysFlag) any {
		switch f {
		case actor.SysOn:
			return true
		case actor.SysGet:
			return sysAtomGet
		case actor.SysPrint:
			return actor.Atom("print")
		}
		return false
	}
	debug := func(what any) any { return etf.Tuple{sysAtomDebug, what} }
	switch req.Op {
	case actor.SysGetState:
		return actor.Atom("get_state"), nil
	case actor.SysGetStatus:
		return actor.Atom("get_status"), nil
	case actor.SysSuspend:
		return actor.Atom("suspend"), nil
	case actor.SysResume:
		return actor.Atom("resume"), nil
	case actor.SysTerminate:
		r := req.Reason
		if r == nil {
			r = actor.Normal
		}
		return etf.Tuple{actor.Atom("terminate"), n.wireReason(r)}, nil
	case actor.SysTrace:
		return debug(etf.Tuple{actor.Atom("trace"), req.Flag == actor.SysOn}), nil
	case actor.SysLog:
		if req.Flag == actor.SysOn && req.N > 0 {
			return debug(etf.Tuple{actor.Atom("log"), etf.Tuple{true, req.N}}), nil
		}
		return debug(etf.Tuple{actor.Atom("log"), flag(req.Flag)}), nil
	case actor.SysStatistics:
		return debug(etf.Tuple{actor.Atom("statistics"), flag(req.Flag)}), nil
	case actor.SysNoDebug:
		return debug(actor.Atom("no_debug")), nil
	case actor.SysReplaceState:
		return nil, ErrSysReplaceRemote
	}
	return req.Term, nil
}
