package actor

// System messages: OTP's sys module for Colony's behaviours.
//
// Design note.
//
// Problem. An OTP behaviour answers system messages, {system, From, Req},
// besides its callbacks' traffic: sys:get_state, get_status,
// replace_state, suspend and resume, terminate (gen_server:stop), and the
// debug options (trace, log, statistics). They must be answered by the
// process itself, between two callbacks, so that they see (and replace) the
// state the callbacks see; a suspended process answers nothing else, and
// what else arrives stays queued, in order, for when it resumes. The
// requests come from Go code and from Erlang nodes alike, and a behaviour
// other than Server (a gen_statem, built outside this package) must be able
// to answer them with the same code.
//
// Rejected. (1) Answering from outside the process (reading the Server from
// the caller's goroutine): a data race with the running callbacks, and a
// suspend could not hold the mailbox. (2) A suspended server that keeps
// taking messages and parks them in a queue of its own until resumed: the
// mailbox bound, selective receives and the mailbox's length as observed
// would all lie, and the order with messages skipped by a selective receive
// would need a second merge. (3) A separate control channel: system
// messages are ordered with the others in OTP (a get_state sent after a
// cast sees the cast's effect), and a second lane would lose that.
//
// Protocol. A system message is a call: a Request whose Msg is a
// SysRequest (from Go: SysCall; from a peer node: package dist turns
// {system, From, Req} into one, for an actor that AnswersSys). It is
// taken in mailbox order like any call. A behaviour keeps a SysProc, owned
// by its process, and hands each SysRequest to SysProc.Handle, with a
// SysHost that exposes its state. Handle answers the request; for suspend
// it then waits in a selective Receive that matches only system messages
// (and the parent's exit, and StopServer's request, both of which end the
// process as OTP's suspend_loop does): everything else stays in the mailbox
// in order, and the Receive hands the scheduler role on while it waits. A
// terminate is answered first (sys:terminate gets ok) and then the host
// stops with the reason; a Server's stop runs Terminate like any Stop. The
// debug options record events (a message in, a reply out, a callback that
// did not reply) that the behaviour reports with SysProc.In and
// SysProc.Done; the reply itself is seen by Context.Reply, which reports
// it to the SysProc of the replying process while a debug option is on
// (procExt.sysp, set and cleared by the SysProc).
//
// The race. None across goroutines: SysProc is the process's, every
// request is answered on its goroutine. The one ordering subtlety is the
// terminate reply: it must be sent before Terminate runs (OTP's
// handle_system_msg replies, then calls system_terminate), so that
// proc_lib:stop, which waits for the reply and then for the DOWN, is not
// left waiting on a Terminate that calls back into its caller.

import (
	"errors"
	"fmt"
	"reflect"
	"time"
)

// SysOp is what a SysRequest asks for.
type SysOp uint8

const (
	// SysGetState: sys:get_state; the answer is the state (SysHost.SysState).
	SysGetState SysOp = iota + 1
	// SysReplaceState: sys:replace_state; Replace runs on the state, and
	// the answer is the new state. A Replace that panics leaves the state
	// as it was; the answer is then a *SysCallbackError.
	SysReplaceState
	// SysGetStatus: sys:get_status; the answer is a SysStatus.
	SysGetStatus
	// SysSuspend: sys:suspend; answered nil, then only system messages are
	// taken until SysResume.
	SysSuspend
	// SysResume: sys:resume; answered nil.
	SysResume
	// SysTerminate: sys:terminate (gen_server:stop); answered nil, then
	// the process stops with Reason (a Server runs Terminate).
	SysTerminate
	// SysTrace: sys:trace; Flag SysOn or SysOff; answered nil.
	SysTrace
	// SysLog: sys:log; Flag SysOn (N events kept, 10 if N is 0), SysOff,
	// SysGet (the answer is the []SysEvent logged, oldest first) or SysPrint
	// (the events are written as reports, System.Log).
	SysLog
	// SysStatistics: sys:statistics; Flag SysOn, SysOff, or SysGet (the
	// answer is a *SysStats, nil if statistics are off).
	SysStatistics
	// SysNoDebug: sys:no_debug; every debug option off; answered nil.
	SysNoDebug
	// SysUnknown: a request not understood (Term holds it); answered with
	// ErrUnknownSysMsg.
	SysUnknown
)

// SysFlag is the argument of the debug requests.
type SysFlag uint8

const (
	SysOn SysFlag = iota + 1
	SysOff
	SysGet
	SysPrint
)

// SysRequest is a system message's request: what the Msg of a Request is
// when it is one (OTP's Req in {system, From, Req}). Build it for SysCall;
// package dist builds it from a peer's term.
type SysRequest struct {
	Op      SysOp
	Reason  Reason              // SysTerminate: the reason to stop with (nil: Normal)
	Replace func(state any) any // SysReplaceState
	Flag    SysFlag             // SysTrace, SysLog, SysStatistics
	N       int                 // SysLog with SysOn: how many events to keep (0: 10)
	Term    any                 // SysUnknown: the request as received
}

// IsSysRequest reports whether m, a message as a Receive's match func
// sees it, is a system message: a Request of a SysRequest.
func IsSysRequest(m any) bool {
	r, ok := m.(Request)
	if !ok {
		return false
	}
	_, ok = r.Msg.(SysRequest)
	return ok
}

// ErrUnknownSysMsg answers a SysUnknown request (OTP's {error,
// {unknown_system_msg, Req}}).
var ErrUnknownSysMsg = errors.New("actor: unknown system message")

// SysCallbackError answers a SysReplaceState whose Replace panicked, or
// returned a value the behaviour cannot take as its state (OTP's {error,
// {callback_failed, ...}}): the state was left as it was.
type SysCallbackError struct {
	Value any // what Replace panicked with, or the value refused
	// Refused: Replace returned a value the host refused (Value); false:
	// Replace panicked with Value.
	Refused bool
}

func (e *SysCallbackError) Error() string {
	if e.Refused {
		return fmt.Sprintf("actor: replace_state: the new state %T is refused", e.Value)
	}
	return fmt.Sprintf("actor: replace_state: callback failed: %v", e.Value)
}

// StatusFormatter is OTP's format_status: a Server (for a Typed server, the
// TypedServer) that implements it chooses what SysStatus.State shows of it
// (a copy of what is worth seeing, secrets left out). FormatStatus runs on
// the server's goroutine; its result is handed to another goroutine (or
// node), so it should share nothing the server goes on mutating. Without
// it, State is the state's text (fmt's %+v).
type StatusFormatter interface {
	FormatStatus() any
}

// SysStatus is the answer to SysGetStatus: OTP's {status, Pid, {module,
// Mod}, [PDict, SysState, Parent, Debug, Misc]} as a gen_server gives it.
type SysStatus struct {
	Pid       Pid
	Name      string // the registered name, or ""
	Behaviour string // "gen_server" for a Server and a supervisor
	Module    string // the Go type of the state
	Suspended bool
	// Parent is the process the behaviour was started by when linked to it
	// (the zero Pid for one started from outside, or unlinked).
	Parent Pid
	// The debug options in force: Trace, the Log (nil unless on), and the
	// Statistics (nil unless on).
	Trace      bool
	Log        []SysEvent
	LogOn      bool
	Statistics *SysStats
	// State is what the state shows: StatusFormatter's answer, or the
	// state's text.
	State any
}

// SysEventKind is what a SysEvent records.
type SysEventKind uint8

const (
	// SysIn: a message taken by a callback (OTP's {in, Msg}).
	SysIn SysEventKind = iota + 1
	// SysOut: a reply sent from the callback ({out, Reply, To, State}).
	SysOut
	// SysNoReply: a callback that returned without replying ({noreply,
	// State}).
	SysNoReply
)

// SysEvent is one event of the debug log and trace.
type SysEvent struct {
	Kind SysEventKind
	// In: Call, Cast or neither (info). Msg is the request, the cast or
	// the message; From the caller of a call.
	Call, Cast bool
	Msg        any
	From       Pid // In of a call: the caller; Out: who the reply went to
	// State (Out, NoReply): the state's text after the callback, as
	// SysStatus.State shows it.
	State any
}

// String formats e as OTP's sys trace does.
func (e SysEvent) String() string {
	switch e.Kind {
	case SysIn:
		switch {
		case e.Call:
			return fmt.Sprintf("got call %v from %v", e.Msg, e.From)
		case e.Cast:
			return fmt.Sprintf("got cast %v", e.Msg)
		}
		return fmt.Sprintf("got %v", e.Msg)
	case SysOut:
		return fmt.Sprintf("sent %v to %v, new state %v", e.Msg, e.From, e.State)
	case SysNoReply:
		return fmt.Sprintf("new state %v", e.State)
	}
	return "unknown event"
}

// SysStats is the answer to SysStatistics with SysGet: OTP's
// [{start_time, T}, {current_time, T}, {reductions, R}, {messages_in, In},
// {messages_out, Out}]. Colony counts no reductions; Callbacks counts the
// callbacks run since the statistics were turned on instead.
type SysStats struct {
	Start, Now time.Time
	Callbacks  uint64
	In, Out    uint64
}

// SysHost is what a behaviour gives SysProc.Handle: its state and its
// stop. Its methods run on the behaviour's process.
type SysHost interface {
	// SysState is the state: what GetState answers, what Replace gets.
	SysState() any
	// SysSetState makes v the state, or refuses it (a value of another
	// type): the error is the answer, the state left as it was.
	SysSetState(v any) error
	// SysStatus fills in what it knows of st: Behaviour, Parent. Pid,
	// Name, Module, the debug options and State are SysProc's.
	SysStatus(st *SysStatus)
	// SysParent is the process whose exit signal, trapped, stops the
	// behaviour (the zero Pid: none, or the System for one started from
	// outside).
	SysParent() Pid
	// SysTerminate stops the behaviour with reason, from inside Handle,
	// after the terminate request was answered; for a Server, a Stop that
	// its dispatch turns into Terminate.
	SysTerminate(c *Context, reason Reason)
}

// SysProc is a behaviour process's system-message state: whether it is
// suspended, and its debug options (OTP's SysState and Debug). The zero
// value is running with no debug option. It belongs to its process: every
// method runs there. It must not be copied after first use.
type SysProc struct {
	suspended bool
	trace     bool
	logOn     bool
	logN      int
	log       []SysEvent // ring of logN, oldest at logHead when full
	logHead   int
	stats     *SysStats
	replied   bool // an Out was recorded since the last In
	host      SysHost
}

// debug reports whether a debug option is on.
func (s *SysProc) debug() bool { return s.trace || s.logOn || s.stats != nil }

// Suspended reports whether the process is suspended (it is only while
// Handle waits for a resume).
func (s *SysProc) Suspended() bool { return s.suspended }

// Handle answers req, a Request whose Msg is a SysRequest (IsSysRequest),
// for the behaviour host; it reports false, and does nothing, for any
// other Request. A suspend is answered and then waits in Handle (see the
// design note) until a resume, a terminate, StopServer's request or the
// parent's trapped exit, answering system messages meanwhile. After a
// terminate, Handle has called host.SysTerminate and returns; the
// behaviour's loop must not run a callback after that (for a Server, the
// Stop ends it).
func (s *SysProc) Handle(c *Context, req Request, host SysHost) bool {
	sr, ok := req.Msg.(SysRequest)
	if !ok {
		return false
	}
	s.host = host
	if s.do(c, req, sr, host) {
		return true // terminating
	}
	for s.suspended {
		m, err := c.Receive(func(m any) bool { return s.suspendMatch(c, m, host) }, Infinity)
		if err != nil {
			return true // the process is being torn down
		}
		switch x := m.(type) {
		case Request:
			if s.do(c, x, x.Msg.(SysRequest), host) {
				return true
			}
		case stopRequest:
			s.suspended = false
			host.SysTerminate(c, x.reason)
			return true
		case Exit:
			s.suspended = false
			host.SysTerminate(c, x.Reason)
			return true
		}
	}
	return true
}

// suspendMatch is what a suspended process takes: system messages, a
// StopServer request, and its parent's exit signal when it traps exits
// (OTP's suspend_loop takes {'EXIT', Parent, R}).
func (s *SysProc) suspendMatch(c *Context, m any, host SysHost) bool {
	switch x := m.(type) {
	case Request:
		_, ok := x.Msg.(SysRequest)
		return ok
	case stopRequest:
		return true
	case Exit:
		return x.From == host.SysParent() && c.proc().flags.has(flagTrap)
	}
	return false
}

// do answers one request; it reports whether the process is terminating.
func (s *SysProc) do(c *Context, req Request, sr SysRequest, host SysHost) bool {
	switch sr.Op {
	case SysGetState:
		c.Reply(req, host.SysState())
	case SysReplaceState:
		v, err := s.replace(sr.Replace, host)
		if err != nil {
			c.ReplyError(req, err)
		} else {
			c.Reply(req, v)
		}
	case SysGetStatus:
		c.Reply(req, s.status(c, host))
	case SysSuspend:
		s.suspended = true
		c.Reply(req, nil)
	case SysResume:
		s.suspended = false
		c.Reply(req, nil)
	case SysTerminate:
		// Answer first, then stop (OTP: gen:reply, then system_terminate).
		c.Reply(req, nil)
		s.suspended = false
		r := sr.Reason
		if r == nil {
			r = Normal
		}
		host.SysTerminate(c, r)
		return true
	case SysTrace, SysLog, SysStatistics, SysNoDebug:
		v, err := s.debugCmd(c, sr)
		if err != nil {
			c.ReplyError(req, err)
		} else {
			c.Reply(req, v)
		}
		s.attach(c)
	default:
		c.ReplyError(req, ErrUnknownSysMsg)
	}
	return false
}

// replace runs f on the state and makes its result the state; a panic in
// f, or a result the host refuses, leaves the state as it was.
func (s *SysProc) replace(f func(any) any, host SysHost) (v any, err error) {
	if f == nil {
		return nil, &SysCallbackError{Value: "nil Replace func"}
	}
	old := host.SysState()
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(exitUnwind); ok {
					panic(r)
				}
				err = &SysCallbackError{Value: r}
			}
		}()
		v = f(old)
	}()
	if err != nil {
		return nil, err
	}
	if err := host.SysSetState(v); err != nil {
		return nil, err
	}
	return v, nil
}

// status is the answer to SysGetStatus.
func (s *SysProc) status(c *Context, host SysHost) SysStatus {
	st := SysStatus{Pid: c.Self(), Suspended: s.suspended, Trace: s.trace, LogOn: s.logOn}
	state := host.SysState()
	st.Module = fmt.Sprintf("%T", state)
	st.State = FormatState(state)
	if s.logOn {
		st.Log = s.logged()
	}
	if s.stats != nil {
		st.Statistics = s.statsNow()
	}
	st.Name, _ = c.w.sys.nm.reg.NameOf(st.Pid)
	host.SysStatus(&st)
	return st
}

// FormatState is what a status shows of state: its FormatStatus if it is a
// StatusFormatter, else its text.
func FormatState(state any) any {
	if f, ok := state.(StatusFormatter); ok {
		return f.FormatStatus()
	}
	return fmt.Sprintf("%+v", state)
}

// debugCmd runs a debug request.
func (s *SysProc) debugCmd(c *Context, sr SysRequest) (any, error) {
	switch sr.Op {
	case SysNoDebug:
		s.trace, s.logOn, s.log, s.logHead, s.stats = false, false, nil, 0, nil
		return nil, nil
	case SysTrace:
		switch sr.Flag {
		case SysOn, SysOff:
			s.trace = sr.Flag == SysOn
			return nil, nil
		}
	case SysLog:
		switch sr.Flag {
		case SysOn:
			n := sr.N
			if n <= 0 {
				n = 10
			}
			old := s.logged()
			if len(old) > n {
				old = old[len(old)-n:]
			}
			s.logOn, s.logN, s.log, s.logHead = true, n, old, 0
			return nil, nil
		case SysOff:
			s.logOn, s.log, s.logHead = false, nil, 0
			return nil, nil
		case SysGet:
			return s.logged(), nil
		case SysPrint:
			for _, e := range s.logged() {
				c.w.sys.Log("*DBG* %s %v", s.who(c), e)
			}
			return nil, nil
		}
	case SysStatistics:
		switch sr.Flag {
		case SysOn:
			if s.stats == nil {
				s.stats = &SysStats{Start: time.Now()}
			}
			return nil, nil
		case SysOff:
			s.stats = nil
			return nil, nil
		case SysGet:
			return s.statsNow(), nil
		}
	}
	return nil, ErrUnknownSysMsg
}

// attach makes Context.Reply report replies to s while a debug option is
// on, and stop when none is.
func (s *SysProc) attach(c *Context) {
	e := c.proc().x()
	if s.debug() {
		e.sysp = s
	} else if e.sysp == s {
		e.sysp = nil
	}
}

func (s *SysProc) statsNow() *SysStats {
	if s.stats == nil {
		return nil
	}
	st := *s.stats
	st.Now = time.Now()
	return &st
}

// logged is the log, oldest first, in a slice of its own.
func (s *SysProc) logged() []SysEvent {
	if len(s.log) < s.logN || s.logHead == 0 {
		return append([]SysEvent(nil), s.log...)
	}
	out := make([]SysEvent, 0, len(s.log))
	out = append(out, s.log[s.logHead:]...)
	return append(out, s.log[:s.logHead]...)
}

// who names the process in trace lines: its registered name, or its pid.
func (s *SysProc) who(c *Context) string {
	if name, ok := c.w.sys.nm.reg.NameOf(c.Self()); ok {
		return name
	}
	return c.Self().String()
}

// record handles one event for the debug options in force.
func (s *SysProc) record(c *Context, e SysEvent) {
	if s.stats != nil {
		switch e.Kind {
		case SysIn:
			s.stats.In++
			s.stats.Callbacks++
		case SysOut:
			s.stats.Out++
		}
	}
	if s.trace {
		c.w.sys.Log("*DBG* %s %v", s.who(c), e)
	}
	if s.logOn {
		if len(s.log) < s.logN {
			s.log = append(s.log, e)
		} else {
			s.log[s.logHead] = e
			s.logHead = (s.logHead + 1) % s.logN
		}
	}
}

// In records a message taken by a callback (before the callback runs):
// msg is a Request for a call, cast true for a Cast's message. It costs a
// branch while no debug option is on.
func (s *SysProc) In(c *Context, msg any, cast bool) {
	s.replied = false
	if !s.debug() {
		return
	}
	e := SysEvent{Kind: SysIn, Msg: msg, Cast: cast}
	if r, ok := msg.(Request); ok {
		e.Call, e.Msg, e.From = true, r.Msg, r.From()
	}
	s.record(c, e)
}

// Done records the end of a callback that did not reply (OTP's noreply):
// a callback that replied recorded its Out through Context.Reply.
func (s *SysProc) Done(c *Context) {
	if !s.debug() || s.replied || s.host == nil {
		return
	}
	s.record(c, SysEvent{Kind: SysNoReply, State: FormatState(s.host.SysState())})
}

// out is Context.Reply's report of a reply sent by the process.
func (s *SysProc) out(c *Context, req Request, v any) {
	if _, ok := req.Msg.(SysRequest); ok {
		return // the answer to a system message is no event
	}
	s.replied = true
	if !s.debug() || s.host == nil {
		return
	}
	s.record(c, SysEvent{Kind: SysOut, Msg: v, From: req.From(), State: FormatState(s.host.SysState())})
}

// SysAnswerer is implemented by an Actor that answers system messages
// (a Server's, a supervisor's, a behaviour that hands them to a SysProc):
// SysCall reaches it, and a system message from another node reaches it as
// a Request of a SysRequest. To any other actor SysCall is ErrNotServer,
// and a peer's system message arrives as the term it was.
type SysAnswerer interface {
	Actor
	AnswersSys()
}

// AnswersSys reports whether pid is a live local actor that answers system
// messages (its Actor is a SysAnswerer).
func (sys *System) AnswersSys(pid Pid) bool {
	p, err := sys.lookup(pid)
	if err != nil {
		return false
	}
	_, ok := p.beh.(SysAnswerer)
	return ok
}

// SysCall sends req to pid as a system message and waits up to timeout
// for the answer (sys:send_system_msg). c is an *Context (its wait hands
// the scheduler role on) or a *System. A local pid that is alive but
// does not answer system messages is ErrNotServer; a remote pid is called
// through the route, whose peer answers it if it understands a
// SysRequest. Other errors are Call's.
func SysCall(c Caller, pid Pid, req SysRequest, timeout time.Duration) (any, error) {
	var sys *System
	switch x := c.(type) {
	case *Context:
		sys = x.w.sys
	case *System:
		sys = x
	}
	if sys != nil {
		if p, err := sys.lookup(pid); err == nil {
			if _, ok := p.beh.(SysAnswerer); !ok {
				return nil, ErrNotServer
			}
		}
	}
	return c.Call(pid, req, timeout)
}

// The Server's side.

// AnswersSys marks a Server's actor as answering system messages.
func (a *serverActor) AnswersSys() {}

// A SysStater is a Server whose state, as the system messages show and
// replace it, is not the Server itself: a behaviour built on Server, as
// package statem shows a machine's state and data (sys:get_state of a
// gen_statem gives {State, Data}). Its methods run on the server's
// process, as SysHost's do; SysStatus runs after the Server's own has
// filled in Behaviour ("gen_server") and Parent, and may change them and
// Module.
type SysStater interface {
	SysState() any
	SysSetState(v any) error
	SysStatus(st *SysStatus)
}

// SysState is the Server (the TypedServer of a Typed one), or what a
// SysStater says.
func (a *serverActor) SysState() any {
	if st, ok := a.srv.(SysStater); ok {
		return st.SysState()
	}
	if in, ok := a.srv.(interface{ inner() any }); ok {
		return in.inner()
	}
	return a.srv
}

// SysSetState takes v as the Server if it is one of the same type (for a
// Typed server, a TypedServer of the same type), or gives it to a
// SysStater.
func (a *serverActor) SysSetState(v any) error {
	if st, ok := a.srv.(SysStater); ok {
		return st.SysSetState(v)
	}
	old := a.SysState()
	if v == nil || reflect.TypeOf(v) != reflect.TypeOf(old) {
		return &SysCallbackError{Value: v, Refused: true}
	}
	if r, ok := a.srv.(interface{ withInner(any) Server }); ok {
		a.srv = r.withInner(v)
		return nil
	}
	a.srv = v.(Server) // same type as a Server: a Server
	return nil
}

func (a *serverActor) SysStatus(st *SysStatus) {
	st.Behaviour = "gen_server"
	st.Parent = a.parent
	if s, ok := a.srv.(SysStater); ok {
		s.SysStatus(st)
	}
}

func (a *serverActor) SysParent() Pid { return a.parent }

func (a *serverActor) SysTerminate(c *Context, reason Reason) { c.Stop(reason) }

// SysStop stops pid as proc_lib:stop does (gen_server:stop/3, and
// sys:terminate followed by the wait for the exit): it monitors pid, asks
// it to terminate with reason (nil: Normal) by a system message, and waits
// for its exit, all within timeout. The answer is nil when pid exited with
// reason; ErrNoProc if it was not alive; a *CallExitError with the reason
// it exited with if that was another (a kill meanwhile, a Terminate that
// stopped with another reason or panicked); ErrTimeout if it has not exited
// in time (the request stays queued: it stops when it takes it);
// ErrNotServer if it does not answer system messages; ErrCallSelf for the
// caller itself. c is a *Context or a *System.
func SysStop(c Caller, pid Pid, reason Reason, timeout time.Duration) error {
	if timeout < 0 {
		return ErrNegativeTimeout
	}
	if reason == nil {
		reason = Normal
	}
	var deadline time.Time
	if timeout != Infinity {
		deadline = time.Now().Add(timeout)
	}
	left := func() time.Duration {
		if timeout == Infinity {
			return Infinity
		}
		return max(time.Until(deadline), 0)
	}
	req := SysRequest{Op: SysTerminate, Reason: reason}
	switch x := c.(type) {
	case *Context:
		if pid == x.Self() {
			return ErrCallSelf
		}
		ref, err := x.Monitor(pid)
		if err != nil {
			return err
		}
		// A callee that died before answering (ErrNoProc, a
		// *CallExitError) leaves its Down, which says with what.
		if _, err := SysCall(x, pid, req, left()); err != nil && !errors.Is(err, ErrNoProc) {
			x.Demonitor(ref, true)
			return err
		}
		m, err := x.Receive(func(m any) bool { d, ok := m.(Down); return ok && d.Ref == ref }, left())
		if err != nil {
			x.Demonitor(ref, true)
			return err
		}
		return stopResult(m.(Down).Reason, reason)
	case *System:
		w, err := x.Monitor(pid)
		if err != nil {
			return err
		}
		defer w.Stop()
		if _, err := SysCall(x, pid, req, left()); err != nil && !errors.Is(err, ErrNoProc) {
			return err
		}
		var expire <-chan time.Time
		if timeout != Infinity {
			t := time.NewTimer(left())
			defer t.Stop()
			expire = t.C
		}
		select {
		case <-w.Done():
			return stopResult(w.Reason(), reason)
		case <-expire:
			return ErrTimeout
		}
	}
	panic(fmt.Sprintf("actor: SysStop from a %T: pass a *Context or a *System", c))
}
