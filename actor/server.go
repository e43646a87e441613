// The Server behaviour: OTP's gen_server on top of an Actor.
//
// Design note.
//
// Problem. A gen_server is a receive loop with a fixed shape: a synchronous
// start that waits for init, calls answered now or later, casts, other
// messages, and a terminate callback that runs when the server stops itself,
// crashes, or is told to stop by its parent while trapping exits. Users
// should write the callbacks only, with Go types where generics carry them.
//
// Rejected. (1) A Server as a goroutine with a channel loop: it would cost a
// goroutine per idle server and bypass the scheduler. (2) Callbacks that
// return OTP-style result tuples ({reply, R, S}, {noreply, S}, {stop, ...}):
// in Go the state lives in the receiver and the Context already has Reply
// and Stop, so the callbacks return nothing and use those verbs. (3) Letting
// the runtime's own panic recovery end a crashed server: Terminate would
// never run, unlike OTP, where terminate/2 sees the crash reason.
//
// Protocol. serverActor wraps the user's Server. Its Init runs Server.Init
// and acknowledges the starter (the "init ack", proc_lib:init_ack) through a
// startSync: a message to a starting actor, which waits for it with a
// selective Receive alongside a monitor's Down; or a closed channel for a
// starter outside the system, which polls Alive to notice a kill. The
// result fields of startSync are written before the ack is sent or the
// channel is closed, and read after it is received (the Send happens before
// the Receive; close happens before the receive from the channel).
// Casts travel wrapped in castMsg so that they never look like info
// messages. After every callback the wrapper checks whether the callback
// asked to stop (Context.Stop sets proc.stop, read here directly: this file
// is part of package actor) and, if so, runs Terminate once with the reason.
//
// The race. An init that outlives the starter's timeout: the starter kills
// the server (untrappable) and unlinks first, as gen:start does, so no Exit
// about it is left in the starter's mailbox. The ack may still come: it was
// sent between the Receive's timeout and the kill. (A killed server's
// orphaned Init that returns acks nothing: startSync.send drops an orphan's
// ack, counted in Stats.Orphaned, as it drops every effect of a killed
// handler; a server killed by someone else during Init is a Down.) In OTP
// the starter would find that ack in its mailbox; here it is an internal
// *startSync, which must never reach user code. So an ack is live only
// while its starter's SpawnServer waits for exactly it (procExt.starting,
// owner-only); accept drops every other one
// and counts it in Stats.LateReplies, as a late call reply is dropped. A
// starter outside the system gets none: the channel is simply never read.

package actor

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Server is the gen_server behaviour. Start one with StartServer (from
// outside the system) or SpawnServer (from an actor, linked: start_link).
// Every callback runs in the server's actor, one at a time, so the value
// needs no locks. Embed ServerBase to get no-op defaults.
//
//   - Init runs before any message; return nil to run, Continue(arg) to run
//     and call HandleContinue(arg) first (see Continuer), ErrIgnore to end
//     quietly (the starter gets ErrIgnore, the actor exits Normal), or any
//     other error to stop: the starter gets a *StartError and the actor exits
//     with the error's reason (see StopReason). Unless it runs, a name given
//     with WithSpawn(Name(...)) is released before the starter gets the
//     result.
//   - HandleCall gets each Request: answer it with c.Reply now, or keep it and
//     answer later (c.Reply or System.Reply), or c.Stop.
//   - HandleCast gets the messages sent with Cast.
//   - HandleInfo gets every other message, including Exit and Down.
//   - Terminate runs once when the server stops itself (c.Stop in a
//     callback), when a callback panics (reason Panic), and when it traps
//     exits and its parent sends an exit signal (the starter; for a server
//     started from outside, the System: Shutdown and System.Exit). It does
//     not run on Kill, nor on an exit signal to a server that does not trap
//     exits, as in OTP. It may block (a Receive, a Call, waiting for a
//     socket to drain): a supervisor bounds it by the child's Shutdown
//     timeout, then kills. A c.Stop in Terminate changes the reason the
//     server exits with (terminate/2 exiting with another reason), and the
//     crash report names the new one.
//
// A Server also answers OTP's system messages (sys:get_state,
// sys:suspend, gen_server:stop, ...; package sysmsg from Go) between two
// callbacks, in mailbox order; they never reach the callbacks. Implement
// StatusFormatter to choose what a status shows of the state.
type Server interface {
	Init(c *Context) error
	HandleCall(c *Context, req Request)
	HandleCast(c *Context, msg any)
	HandleInfo(c *Context, msg any)
	Terminate(c *Context, reason Reason)
}

// ServerBase gives a Server no-op callbacks; HandleCall answers every call
// with ErrUnhandled. Embed it and override what you need. The zero value is
// ready; it holds no state.
type ServerBase struct{}

func (ServerBase) Init(*Context) error { return nil }
func (ServerBase) HandleCall(c *Context, req Request) {
	c.ReplyError(req, fmt.Errorf("%w: %T", ErrUnhandled, req.Msg))
}
func (ServerBase) HandleCast(*Context, any)   {}
func (ServerBase) HandleInfo(*Context, any)   {}
func (ServerBase) Terminate(*Context, Reason) {}

var (
	// ErrIgnore: returned by Server.Init to end the server quietly (OTP's
	// ignore), and by StartServer/SpawnServer when it did.
	ErrIgnore = errors.New("actor: server init ignored")
	// ErrUnhandled: the server has no handler for the request.
	ErrUnhandled = errors.New("actor: request not handled")
)

// StartError is the error of a start that failed: a server's Init (or a
// plain actor's InitAck, for StartActor and StartLink) returned an error
// (Reason is that error's StopReason), Init panicked (Reason is a Panic),
// the start timed out (Reason is Atom("timeout"); errors.Is(err,
// ErrTimeout)), or the actor died first (Reason is its exit reason).
type StartError struct{ Reason Reason }

func (e *StartError) Error() string { return fmt.Sprintf("actor: start failed: %v", e.Reason) }

// Unwrap makes errors.Is(err, ErrTimeout) hold for an init timeout, and
// exposes the error the reason carries (ReasonError): a reason that is an
// error, or one nested in ShutdownWith and the like, so that errors.Is and
// errors.As reach a child's start error through a supervisor's.
func (e *StartError) Unwrap() error { return ReasonError(e.Reason) }

// stopError carries an arbitrary reason through Init's error result.
type stopError struct {
	reason Reason
	quiet  bool // StopUnreported: no crash report
}

func (e stopError) Error() string { return fmt.Sprintf("stop: %v", e.reason) }

// Stop returns the error Server.Init returns to stop with reason (OTP's
// {stop, Reason}): the actor exits with reason, the starter gets a
// *StartError carrying it.
func Stop(reason Reason) error { return stopError{reason: reason} }

// StopUnreported is Stop without the crash report an abnormal reason
// writes: for a failure the starter reports itself, such as a
// supervisor's bad spec, which its StartServer returns as an error (OTP 26
// lets init/1 fail so with {error, Reason}).
func StopUnreported(reason Reason) error { return stopError{reason: reason, quiet: true} }

// StopReason is the exit reason for an Init error: the reason of a Stop
// error (Normal for Stop(nil): a nil reason is Normal), else the error
// value itself.
func StopReason(err error) Reason {
	var se stopError
	if errors.As(err, &se) {
		if se.reason == nil {
			return Normal
		}
		return se.reason
	}
	return err
}

// Sender is implemented by *System and *Context.
type Sender interface {
	Send(pid Pid, msg any) error
	SendName(name string, msg any) error
}

// castMsg wraps a Cast so the server tells it from an info message.
type castMsg struct{ msg any }

// Cast sends msg to a Server's HandleCast (gen_server:cast). Like Send, it
// does not fail for a dead pid.
func Cast(s Sender, pid Pid, msg any) error { return s.Send(pid, castMsg{msg}) }

// CastMsg reports whether m, a message as a selective Context.Receive's
// match func sees it, is a Cast, and returns the message cast: a Server
// that receives selectively (to let urgent casts overtake queued work) can
// match casts, as an Erlang process matches {'$gen_cast', Msg}. A call is
// a Request in the mailbox; anything else is an info message.
func CastMsg(m any) (msg any, ok bool) {
	c, ok := m.(castMsg)
	return c.msg, ok
}

// ServerOption configures StartServer and SpawnServer.
type ServerOption func(*serverOpts)

type serverOpts struct {
	timeout time.Duration
	spawn   []SpawnOption
	nolink  bool
}

// NoLink makes SpawnServer start the server unlinked (gen_server:start from
// a process, not start_link): the starter still waits for Init and learns
// its result, but the server has no parent: the starter's death does not
// stop it, and its death sends the starter no exit signal. StartServer
// (from outside) is unlinked already.
func NoLink() ServerOption { return func(o *serverOpts) { o.nolink = true } }

// InitTimeout bounds how long the starter waits for Init (default
// Infinity). When it expires the server is killed and the start fails with
// a *StartError whose Reason is Atom("timeout").
func InitTimeout(d time.Duration) ServerOption {
	return func(o *serverOpts) { o.timeout = d }
}

// WithSpawn passes spawn options (Name, MailboxBound, ...) to the server's
// spawn. A Name taken fails the start with ErrNameTaken. If Init fails or
// ignores, the Name is free again when the start returns, as in OTP, so a
// start made at once with it (a supervisor's restart) cannot find it taken.
func WithSpawn(opts ...SpawnOption) ServerOption {
	return func(o *serverOpts) { o.spawn = append(o.spawn, opts...) }
}

func newServerOpts(opts []ServerOption) serverOpts {
	o := serverOpts{timeout: Infinity}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// startSync is the init ack (see the design note). The result fields are
// written by the server before the ack and read by the starter after it.
// An ack sent to an actor reaches it only through accept, which drops it
// unless that actor's SpawnServer is waiting for it ("The race").
type startSync struct {
	done   chan struct{} // starter outside the system: closed on ack
	ignore bool
	failed bool
	reason Reason
}

type serverActor struct {
	srv     Server
	parent  Pid           // owner, immutable; zero: started from outside
	name    string        // the Name spawn option's name, or ""; immutable
	sync    *startSync    // owner; nil after the ack
	cont    *continueInit // owner: a HandleContinue asked for, to run before the next message
	starter Pid
	stopped bool // owner: Terminate has run
	// stopReply: StopReply's reply, sent after Terminate (owner).
	stopReply *pendingReply
	sysp      SysProc // owner: system messages (sysmsg.go)
}

// StartServer starts s from outside the system (gen_server:start, no link)
// and waits for its Init. It returns the pid, ErrIgnore, a *StartError, or a
// spawn error. A *StartError's Reason is what Init failed with, timeout
// (the server is then killed), or the server's exit reason if it died
// before its Init returned. The server's parent is the System: a Shutdown or a
// System.Exit reaches Terminate if it traps exits. Its wait is a plain Go
// wait: from inside a handler use SpawnServer, whose wait hands the
// scheduler role on (StartServer there holds the role until the watchdog
// retires it, Config.WatchdogThreshold).
func StartServer(sys *System, s Server, opts ...ServerOption) (Pid, error) {
	if sys == nil {
		return Pid{}, ErrNilSystem
	}
	if err := checkServer(s); err != nil {
		return Pid{}, err
	}
	o := newServerOpts(opts)
	if o.timeout < 0 {
		return Pid{}, ErrNegativeTimeout
	}
	ss := &startSync{done: make(chan struct{})}
	// The server's death before its ack is the watch's, made with the
	// server (proc_lib spawns with a monitor): one made after the spawn
	// said noproc for a server that had died in between.
	w := newWatch()
	pid, err := sys.Spawn(&serverActor{srv: s, name: spawnName(o.spawn), sync: ss}, append(o.spawn[:len(o.spawn):len(o.spawn)], watchFromBirth(w))...)
	if err != nil {
		w.Stop()
		return Pid{}, err
	}
	defer w.Stop()
	return sys.awaitStart(pid, ss, w, o.timeout)
}

// awaitStart is the wait of a start from outside the System (StartServer,
// StartActor): for ss's ack, the actor's death (w, taken at its spawn) or
// the timeout, which kills it.
func (sys *System) awaitStart(pid Pid, ss *startSync, w *Watch, timeout time.Duration) (Pid, error) {
	var deadline <-chan time.Time
	if timeout != Infinity {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-ss.done:
		return ss.result(pid)
	case <-deadline:
		if h := testHookStartDeadline.Load(); h != nil {
			(*h)(ss.done)
		}
		// An ack that came with the deadline wins: the server started,
		// and killing it now would lose it for a timeout it beat.
		select {
		case <-ss.done:
			return ss.result(pid)
		default:
		}
		// So does a death that came with it (sync_start's receive
		// matches a DOWN already there before its after clause).
		select {
		case <-w.Done():
			return Pid{}, &StartError{Reason: w.Reason()}
		default:
		}
		sys.Exit(pid, Kill)
		return Pid{}, &StartError{Reason: Atom("timeout")}
	case <-w.Done():
		select {
		case <-ss.done: // acked, then died: the ack is the result
			return ss.result(pid)
		default:
		}
		return Pid{}, &StartError{Reason: w.Reason()} // died before its ack
	}
}

// testHookStartDeadline, if set, runs in StartServer when its deadline has
// fired and before it looks for an ack (tests hold it there until the ack).
var testHookStartDeadline atomic.Pointer[func(acked <-chan struct{})]

// SpawnServer starts s linked to the calling actor (gen_server:start_link)
// and waits for its Init with a selective Receive; other messages stay in
// the caller's mailbox. The caller is the server's parent. As in OTP, if
// Init fails, a trapping caller also gets the link's Exit message. With
// NoLink it is gen_server:start instead: unlinked, and no parent.
func SpawnServer(c *Context, s Server, opts ...ServerOption) (Pid, error) {
	if err := checkServer(s); err != nil {
		return Pid{}, err
	}
	o := newServerOpts(opts)
	if o.timeout < 0 {
		return Pid{}, ErrNegativeTimeout
	}
	self := c.Self()
	ss := &startSync{}
	sa := &serverActor{srv: s, parent: self, starter: self, name: spawnName(o.spawn), sync: ss}
	if o.nolink {
		sa.parent = Pid{} // OTP's nolink start: no parent
	}
	pid, ref, err := c.spawnChild(sa, o.spawn, !o.nolink, true)
	if err != nil {
		return Pid{}, err
	}
	return c.awaitStart(pid, ref, ss, o.timeout)
}

// awaitStart is the wait of a start from a handler (SpawnServer,
// Context.StartLink): for ss's ack, the actor's death or the timeout, which
// kills it (unlinked first, so no Exit is left behind). ref is the caller's
// monitor of the actor, made with it (spawnChild), as proc_lib's spawn with
// a monitor: made after the spawn, an actor that died first gave a Down
// with noproc, and the start failed with noproc instead of the actor's
// reason (links/init_ack, start c, under load).
func (c *Context) awaitStart(pid Pid, ref Ref, ss *startSync, timeout time.Duration) (Pid, error) {
	// ss is live for accept only during this Receive (see "The race"):
	// after it, on every way out, ss's ack is stale and is dropped.
	e := c.proc().x()
	e.starting = ss
	m, err := c.Receive(func(m any) bool {
		if s, ok := m.(*startSync); ok {
			return s == ss
		}
		d, ok := m.(Down)
		return ok && d.Ref == ref
	}, timeout)
	e.starting = nil
	if err != nil {
		// Timeout (gen:start's kill path): unlink first so no Exit is left.
		c.Demonitor(ref, true)
		c.Unlink(pid)
		c.Exit(pid, Kill)
		if errors.Is(err, ErrTimeout) {
			return Pid{}, &StartError{Reason: Atom("timeout")}
		}
		return Pid{}, err
	}
	if d, ok := m.(Down); ok {
		return Pid{}, &StartError{Reason: d.Reason}
	}
	c.Demonitor(ref, true)
	return ss.result(pid)
}

func (ss *startSync) result(pid Pid) (Pid, error) {
	switch {
	case ss.ignore:
		return Pid{}, ErrIgnore
	case ss.failed:
		return Pid{}, &StartError{Reason: ss.reason}
	}
	return pid, nil
}

// ack reports the init result to the starter.
func (a *serverActor) ack(c *Context) {
	ss := a.sync
	a.sync = nil
	ss.send(c, a.starter)
}

// send delivers the ack to its starter: closes done for one outside the
// System, or queues ss for starter. A killed actor's ack is dropped, as
// every effect of an orphaned handler is: killed in its Init, the actor
// never acked, and its start fails with killed (OTP: exit(self(), kill)
// in init/1 makes gen_server:start return {error, killed}); delivered, the
// ack raced the Down and the start could return a dead pid as started.
func (ss *startSync) send(c *Context, starter Pid) {
	if c.orphan() {
		return
	}
	if ss.done != nil {
		if c.w.sys.cfg.det != nil {
			c.w.sys.detHold(func() { close(ss.done) }) // det.go
			return
		}
		close(ss.done)
		return
	}
	// As a Down or an Exit: a starter's mailbox bound must not refuse it,
	// or the starter waits forever, or times out and kills an actor that
	// started.
	sys := c.w.sys
	if q, err := sys.lookup(starter); err == nil {
		sys.deliver(c.w, q, ss)
	}
}

// Init runs Server.Init and acknowledges the starter.
func (a *serverActor) Init(c *Context) {
	panicked, err := a.safeInit(c)
	cont, err := a.takeContinue(err)
	ss := a.sync
	if err != nil || panicked != nil {
		// The start fails (or ignores): give the start name back before
		// the ack, as OTP's gen does (unregister_name, then init_ack).
		// Left to the death that follows the ack, the name was still
		// held when the starter returned, and a start made at once with
		// it, a supervisor's restart of the child included, failed with
		// ErrNameTaken (tests/testdata/erlang/pg/start_fail_name).
		c.w.sys.releaseName(c.proc(), a.name)
	}
	switch {
	case panicked != nil:
		a.initCrashed(c, *panicked)
	case err == nil:
		a.ack(c)
	case errors.Is(err, ErrIgnore):
		ss.ignore = true
		a.ack(c)
		c.Stop(Normal)
	default:
		r := StopReason(err)
		// OTP 25: init's {stop, Reason} exits with Reason, and proc_lib
		// writes a crash report unless it is normal or shutdown (the
		// promise of Config.Logger covers Init). Before the ack, as for a
		// panic. StopUnreported leaves the report to the starter.
		var se stopError
		if quiet := errors.As(err, &se) && se.quiet; !quiet && !IsNormal(r) && !IsShutdown(r) {
			a.report(c, r)
		}
		ss.failed, ss.reason = true, r
		a.ack(c)
		c.Stop(r)
	}
	// A failed Init never runs Terminate (OTP: terminate/2 needs a state).
	a.stopped = err != nil || panicked != nil
	if err != nil || panicked != nil || c.proc().stop {
		a.cont = nil // a stop wins over a continue
		return
	}
	if cont != nil {
		a.cont = cont
	}
	a.runContinues(c)
}

// initCrashed fails the start of a server whose Init panicked or called
// runtime.Goexit (its start name already released): a crash like one in
// any other callback (afterCallback): OTP re-raises init's exception and
// proc_lib writes the crash report. Logged before the ack, so the report
// is written when the start fails; once, since Stop is no panic to the
// runtime's recovery.
func (a *serverActor) initCrashed(c *Context, reason Panic) {
	ss := a.sync
	a.report(c, reason)
	ss.failed, ss.reason = true, reason
	a.ack(c)
	c.Stop(reason)
}

func (a *serverActor) safeInit(c *Context) (p *Panic, err error) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(exitUnwind); ok {
				panic(r)
			}
			p = &Panic{Value: r, Stack: stack()}
		} else if !returned {
			// Init called runtime.Goexit: the goroutine ends after its
			// deferred calls, so Init's code after us never runs. Fail
			// the start here, as for a panic, and leave the actor's exit
			// to activate (goexit.go).
			c.w.sys.releaseName(c.proc(), a.name)
			a.initCrashed(c, goexitReason())
			a.stopped, a.cont = true, nil
		}
	}()
	err = a.srv.Init(c)
	returned = true
	return nil, err
}

// Receive dispatches one message to the matching callback.
func (a *serverActor) Receive(c *Context, msg any) {
	if a.stopped {
		return
	}
	a.dispatch(c, msg)
	a.runContinues(c)
}

// dispatch runs the callback msg is for, then afterCallback.
func (a *serverActor) dispatch(c *Context, msg any) {
	returned := false
	defer func() { a.afterCallback(c, recover(), returned) }()
	a.handle(c, msg)
	returned = true
}

// handle runs the callback msg is for.
func (a *serverActor) handle(c *Context, msg any) {
	switch m := msg.(type) {
	case Request:
		if a.sysp.Handle(c, m, a) {
			return // a system message (sysmsg.go), answered
		}
		a.sysp.In(c, m, false)
		a.srv.HandleCall(c, m)
	case castMsg:
		a.sysp.In(c, m.msg, true)
		a.srv.HandleCast(c, m.msg)
	case stopRequest:
		c.Stop(m.reason) // StopServer: afterCallback runs Terminate
		return
	case Exit:
		if m.From == a.parent && c.proc().flags.has(flagTrap) {
			// The parent's exit signal (gen_server's {'EXIT', Parent, R}):
			// terminate with its reason and exit with it.
			c.Stop(m.Reason)
			return
		}
		a.sysp.In(c, m, false)
		a.srv.HandleInfo(c, m)
	default:
		a.sysp.In(c, m, false)
		a.srv.HandleInfo(c, m)
	}
	a.sysp.Done(c)
}

// afterCallback turns a panic into Terminate(Panic) and a Stop into
// Terminate(reason). It runs deferred, given what recover returned there
// and whether the callback returned: neither a return nor a panic is a
// runtime.Goexit, a crash like a panic (goexit.go), whose goroutine ends
// after the deferred calls.
func (a *serverActor) afterCallback(c *Context, r any, returned bool) {
	if _, ok := r.(exitUnwind); ok {
		panic(r)
	}
	if c.p.exit.Load() != alive {
		// Killed while the callback ran: the server exited killed, and a
		// kill never runs Terminate (the Server contract, as OTP's). What
		// the orphaned callback did after the kill, a stop or a panic, is
		// dropped with it.
		a.stopped = true
		return
	}
	if r != nil || !returned {
		reason := goexitReason() // neither returned nor panicked: a Goexit
		if r != nil {
			reason = Panic{Value: r, Stack: stack()}
		}
		a.stopped = true
		a.stopReply = nil // the callback crashed: it returned no {stop, R, Reply}
		// Stop before Terminate, so that a panic in Terminate has the last
		// word (OTP: terminate_crashed-like; the later Stop overwrote it).
		c.Stop(reason)
		a.finish(c, reason)
		return
	}
	if p := c.proc(); p.stop {
		a.stopped = true
		reason := stopReasonOf(p)
		c.Stop(reason) // before Terminate, as above
		a.finish(c, reason)
	}
}

// finish runs Terminate and then reports an abnormal exit once, with the
// reason the server exits with: a Stop or a panic in Terminate has the last
// word, as OTP's gen_server reports the reason terminate/2 raised (a report
// naming the reason it was stopping with would disagree with the exit its
// monitors see; TestStopInTerminateIsTheReportedExitReason).
// A panic in Terminate is reported by terminate itself. When Terminate
// changed an abnormal reason, the one it replaced (a panic with its stack)
// is kept in the report, after the exit line: an operator needs it. That
// holds when the new reason is normal or shutdown too: a crash is reported
// whatever Terminate does next (Config.Logger: every handler panic), as
// OTP's gen_server reports a terminate/2 that exits with any reason
// (otherwise a panic whose Terminate stopped with shutdown would leave no
// trace; TestPanicReportedWhenTerminateStopsShutdown).
func (a *serverActor) finish(c *Context, reason Reason) {
	panicked := a.terminate(c, reason)
	a.sendStopReply(c) // after Terminate, even one that crashed (gen_server's after clause)
	if panicked {
		return
	}
	r := stopReasonOf(c.proc())
	switch {
	case !IsNormal(reason) && !IsShutdown(reason) && !reasonsEqual(r, reason):
		a.report(c, replacedReason{r, reason})
	case !IsNormal(r) && !IsShutdown(r):
		a.report(c, r)
	}
}

// replacedReason is what a crash report is about when Terminate replaced
// an abnormal reason: the exit reason, and the one it replaced
// (System.logCrash: Report.Reason and Report.Replaced).
type replacedReason struct{ exit, was Reason }

// reasonsEqual compares two reasons; reasons that are not comparable
// (Panic holds any value) are equal only if both are Panics with the same
// stack.
func reasonsEqual(a, b Reason) bool {
	pa, aok := a.(Panic)
	pb, bok := b.(Panic)
	if aok || bok {
		return aok && bok && pa.Stack == pb.Stack
	}
	defer func() { recover() }() // an uncomparable reason is not equal
	return a == b
}

// stopReasonOf is the reason p's last Stop gave (Normal if none did).
func stopReasonOf(p *proc) Reason {
	if p.ext != nil && p.ext.stopReason != nil {
		return p.ext.stopReason
	}
	return Normal
}

// terminate runs Terminate; a panic in it becomes the exit reason and is
// reported, with the abnormal reason it replaced. It says whether
// Terminate panicked.
func (a *serverActor) terminate(c *Context, reason Reason) (panicked bool) {
	returned := false
	defer func() {
		if r := recover(); r != nil || !returned {
			if _, ok := r.(exitUnwind); ok {
				panic(r)
			}
			p := goexitReason() // Terminate called runtime.Goexit: a crash too
			if r != nil {
				p = Panic{Value: r, Stack: stack()}
			}
			if !IsNormal(reason) && !IsShutdown(reason) {
				// Keep the crash it replaced, as finish does for a Stop
				// in Terminate (else only Terminate's panic would be
				// reported; TestPanicReportedWhenTerminatePanics).
				a.report(c, replacedReason{p, reason})
			} else {
				a.report(c, p)
			}
			c.Stop(p)
			panicked = true
		}
	}()
	a.srv.Terminate(c, reason)
	returned = true
	return false
}

// report writes the server's crash report with reason, unless the server
// was killed while this callback ran: it exited with killed, which is not
// reported, and what its orphaned callback does afterwards is dropped, as
// worker.crashed drops the panic of a killed actor (else a supervisor's
// kill of a child whose callback then stopped or panicked would report an
// exit with a reason the child did not exit with).
func (a *serverActor) report(c *Context, reason Reason) {
	if c.p.exit.Load() == alive {
		c.w.sys.logCrash(c.Self(), reason)
	}
}

// ReplyTo is a typed handle on a call: answer with a T, no any.
// It may be copied and kept to answer later; answer at most once.
type ReplyTo[T any] struct{ Req Request }

// Reply answers the call with v (see Context.Reply).
func (r ReplyTo[T]) Reply(c *Context, v T) bool { return c.Reply(r.Req, v) }

// ReplyError answers the call with an error.
func (r ReplyTo[T]) ReplyError(c *Context, err error) bool { return c.ReplyError(r.Req, err) }

// From returns the caller's pid.
func (r ReplyTo[T]) From() Pid { return r.Req.From() }

// TypedServer is a Server whose calls are Q answered with R, and whose casts
// are M. Adapt it with Typed, address it with a ServerRef[Q, R, M]. A call
// of another type is answered with ErrUnhandled; a cast of another type
// reaches HandleInfo. Embedding ServerBase gives no-op Init, HandleInfo and
// Terminate, and HandleCast when M is any; HandleCall must be written, with
// this typed signature (it hides ServerBase's).
type TypedServer[Q, R, M any] interface {
	Init(c *Context) error
	HandleCall(c *Context, q Q, from ReplyTo[R])
	HandleCast(c *Context, m M)
	HandleInfo(c *Context, msg any)
	Terminate(c *Context, reason Reason)
}

type typed[Q, R, M any] struct{ s TypedServer[Q, R, M] }

// Typed adapts a TypedServer to a Server. Typed(nil) is nil, so that
// StartServer and SpawnServer of it are ErrNilBehaviour, as of a nil
// Server (the adapter of a nil was not nil, and the server panicked in
// Init).
func Typed[Q, R, M any](s TypedServer[Q, R, M]) Server {
	if s == nil {
		return nil
	}
	return typed[Q, R, M]{s}
}

// inner is the adapted server, for what it may implement beyond
// TypedServer (Continuer).
func (t typed[Q, R, M]) inner() any { return t.s }

// withInner is the adapter of v, a TypedServer[Q, R, M] (a replaced
// state: sysmsg.go).
func (t typed[Q, R, M]) withInner(v any) Server { return typed[Q, R, M]{v.(TypedServer[Q, R, M])} }

func (t typed[Q, R, M]) Init(c *Context) error { return t.s.Init(c) }
func (t typed[Q, R, M]) HandleCall(c *Context, req Request) {
	if q, ok := req.Msg.(Q); ok {
		t.s.HandleCall(c, q, ReplyTo[R]{req})
		return
	}
	c.ReplyError(req, fmt.Errorf("%w: %T", ErrUnhandled, req.Msg))
}
func (t typed[Q, R, M]) HandleCast(c *Context, msg any) {
	if m, ok := msg.(M); ok {
		t.s.HandleCast(c, m)
		return
	}
	t.s.HandleInfo(c, msg)
}
func (t typed[Q, R, M]) HandleInfo(c *Context, msg any)      { t.s.HandleInfo(c, msg) }
func (t typed[Q, R, M]) Terminate(c *Context, reason Reason) { t.s.Terminate(c, reason) }

// ServerRef addresses a TypedServer with its types: Call takes a Q and
// returns an R, Cast takes an M. It names the server by Pid, or, if Name
// is set, by its registered name, resolved at each call (CallName,
// CastName), so the ref stays good across a supervisor's restart of the
// server. It is a small value; the zero value names no server.
type ServerRef[Q, R, M any] struct {
	Pid  Pid
	Name string
}

// Call calls the server (gen_server:call) and returns its typed answer.
func (r ServerRef[Q, R, M]) Call(c Caller, q Q, timeout time.Duration) (R, error) {
	if r.Name != "" {
		return CallName[R](c, r.Name, q, timeout)
	}
	return Call[R](c, r.Pid, q, timeout)
}

// Cast casts m to the server.
func (r ServerRef[Q, R, M]) Cast(s Sender, m M) error {
	if r.Name != "" {
		return CastName(s, r.Name, m)
	}
	return Cast(s, r.Pid, m)
}
