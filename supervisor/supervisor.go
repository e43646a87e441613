// Supervisor: OTP's supervisor behaviour on actor's public API.
//
// Design note.
//
// Problem. A supervisor starts children in order, restarts them by a
// strategy when they die, counts restarts against an intensity, and stops
// them in reverse order — each stop a protocol of its own (shutdown signal,
// timeout, kill) during which other children may die and the parent may ask
// the supervisor to stop.
//
// Rejected. (1) A goroutine per supervisor watching channels: supervisors
// would not be actors, could not be linked to or supervised by other
// supervisors, and would need a private hook into the runtime for child
// deaths. (2) A non-blocking state machine that stops a child by sending
// the signal and handling the Down later: simpler for the scheduler, but
// every strategy (one_for_all: stop all, then start all) becomes a chain of
// continuations, and OTP itself blocks in shutdown/2. Colony lets a handler
// block (the scheduler role is handed off), so the supervisor is written the
// way OTP's is.
//
// Protocol. A supervisor is an actor.Server that traps exits. Children are
// started by their StartFunc in the supervisor's handler and linked to it by
// the StartFunc (SpawnLink, SpawnServer; the supervisor adds no link of its
// own, which turned a transient child's quick normal exit into noproc). A
// child's death
// reaches HandleInfo as actor.Exit; byPid maps it to the child. Stopping a
// child ("shutdownChild") is OTP 25's shutdown/2: monitor, send the exit
// signal (Shutdown, or Kill for BrutalKill), wait for the Down with the
// child's timeout, then Kill and wait again; then unlink, and take out the
// Exit the link queued (OTP's unlink_flush: after Unlink it is queued
// already or never comes); it gives the reason of a child that was dead
// before the monitor. The Down, not the Exit, ends the wait: a Down is
// delivered exactly once even if the child was already dead, or unlinked
// itself. The child stays linked until it has been signalled: a
// supervisor killed in between (by its parent after a finite Shutdown)
// then takes it down through the link. It used to unlink first, and a
// kill between the Unlink and the signal left the child running with no
// supervisor (for SimpleOneForOne, every child unlinked before the
// signals went out: TestKilledWhileStoppingDynamicChildrenLeaksNone). A child
// that did not exit as asked (killed after its timeout, or dead of a crash
// the stop overtook) is reported, OTP's shutdown_error. Restart
// intensity is the pure rule in intensity.go. Too many restarts, or an
// auto_shutdown, end the supervisor with c.Stop(actor.Shutdown); the Server
// behaviour then runs Terminate, which stops the remaining children in
// reverse order; the parent sees reason Shutdown.
//
// The race. While the supervisor waits in shutdownChild, other children may
// die: their Exit messages stay queued (selective receive takes only the
// Down) and are handled after, by which time byPid may no longer hold them
// (the child was stopped as part of a one_for_all restart): an Exit from an
// unknown pid is ignored, as OTP ignores it. A child that fails to restart
// is marked restarting and retried through a message to self (OTP's
// try_again_restart), each try counted against the intensity, so the
// supervisor stays responsive to calls and to its parent in between.

package supervisor

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/colonyrt/colony/actor"
)

// child is one supervised child. Owned by the supervisor's actor.
type child struct {
	spec       ChildSpec
	pid        actor.Pid // zero: not running
	args       []any     // SimpleOneForOne: StartChildArgs's arguments
	restarting bool
	seq        uint64    // SimpleOneForOne: start order
	key        actor.Pid // SimpleOneForOne: its key in dyn (its pid, or the old pid while restarting)
}

// sup is the supervisor's state; all fields are owned by its actor.
type sup struct {
	initf InitFunc // computes spec in Init (StartInit...); nil: spec is given
	spec  Spec
	self  actor.Pid
	kids  []*child             // static children in start order
	dyn   map[actor.Pid]*child // SimpleOneForOne children, by child.key (restarting ones too, as OTP's {restarting, OldPid})
	byPid map[actor.Pid]*child // every running child
	seq   uint64               // SimpleOneForOne start counter
	retry map[*child]bool      // children whose restart failed, awaiting tryAgain
	in    intensity
	now   func() time.Time
}

type tryAgain struct{ ch *child }

// Start starts a supervisor from outside the system (no link); its parent
// is the System, so System.Shutdown stops it in order. It returns once all
// children have started, or the error that stopped the start.
func Start(sys *actor.System, spec Spec) (actor.Pid, error) {
	return actor.StartServer(sys, newSup(spec), supOpts(spec)...)
}

// StartLink starts a supervisor linked to the calling actor, its parent
// (supervisor:start_link).
func StartLink(c *actor.Context, spec Spec) (actor.Pid, error) {
	return actor.SpawnServer(c, newSup(spec), supOpts(spec)...)
}

// Child returns the ChildSpec of a nested supervisor: type Supervisor,
// shutdown Infinity, permanent.
func Child(id string, spec Spec) ChildSpec {
	return ChildSpec{
		ID:       id,
		Type:     Supervisor,
		Shutdown: Infinity,
		Start:    func(c *actor.Context, _ ...any) (actor.Pid, error) { return StartLink(c, spec) },
	}
}

// ServerStart returns a StartFunc that starts the Server made by newServer
// (given StartChildArgs's arguments, if any) linked to the supervisor.
// opts are the same for every child it starts: for an option that depends on
// the arguments (each dynamic child under a registered name of its own), write
// the StartFunc:
//
//	func(c *actor.Context, args ...any) (actor.Pid, error) {
//		name := args[0].(string)
//		return actor.SpawnServer(c, newTopic(name), actor.WithSpawn(actor.Name(name)))
//	}
func ServerStart(newServer func(args ...any) actor.Server, opts ...actor.ServerOption) StartFunc {
	return func(c *actor.Context, args ...any) (actor.Pid, error) {
		return actor.SpawnServer(c, newServer(args...), opts...)
	}
}

func supOpts(spec Spec) []actor.ServerOption {
	if spec.Name != "" {
		return []actor.ServerOption{actor.WithSpawn(actor.Name(spec.Name))}
	}
	return nil
}

func newSup(spec Spec) *sup {
	s := &sup{
		dyn:   map[actor.Pid]*child{},
		byPid: map[actor.Pid]*child{},
		retry: map[*child]bool{},
		now:   clock,
	}
	s.setSpec(spec)
	return s
}

// setSpec makes spec the supervisor's, with its restart limits.
func (s *sup) setSpec(spec Spec) {
	max, period := spec.limits()
	spec.Children = slices.Clone(spec.Children)
	s.spec = spec
	s.in = intensity{max: max, period: period}
}

// InitFunc computes a supervisor's Spec in the supervisor's own actor
// when it starts, and again each time its own supervisor restarts it:
// OTP's Module:init/1 (a Spec given to Start is fixed once). An error fails
// the start with it; actor.ErrIgnore ignores the start, as init/1's ignore.
// The Spec's Name, if set, is registered once init returns (OTP registers
// the name before init/1: here the name comes from init), and a name
// taken fails the start with actor.ErrNameTaken.
type InitFunc func(c *actor.Context) (Spec, error)

// StartInit starts a supervisor whose spec init computes (see InitFunc),
// from outside the system, as Start does.
func StartInit(sys *actor.System, init InitFunc) (actor.Pid, error) {
	if init == nil {
		return actor.Pid{}, actor.ErrNilBehaviour
	}
	return actor.StartServer(sys, &sup{initf: init, dyn: map[actor.Pid]*child{}, byPid: map[actor.Pid]*child{}, retry: map[*child]bool{}, now: clock})
}

// StartLinkInit is StartLink for a supervisor whose spec init computes.
func StartLinkInit(c *actor.Context, init InitFunc) (actor.Pid, error) {
	if init == nil {
		return actor.Pid{}, actor.ErrNilBehaviour
	}
	return actor.SpawnServer(c, &sup{initf: init, dyn: map[actor.Pid]*child{}, byPid: map[actor.Pid]*child{}, retry: map[*child]bool{}, now: clock})
}

// ChildInit is Child for a nested supervisor whose spec init computes,
// afresh at every restart.
func ChildInit(id string, init InitFunc) ChildSpec {
	return ChildSpec{
		ID:       id,
		Type:     Supervisor,
		Shutdown: Infinity,
		Start:    func(c *actor.Context, _ ...any) (actor.Pid, error) { return StartLinkInit(c, init) },
	}
}

// Init traps exits and starts the children in order; a failure stops the
// ones started, in reverse order, and fails the start.
func (s *sup) Init(c *actor.Context) error {
	c.TrapExit(true)
	s.self = c.Self()
	if s.initf != nil {
		spec, err := s.initf(c)
		if err != nil {
			return err
		}
		s.setSpec(spec)
		if spec.Name != "" {
			if err := c.Register(spec.Name); err != nil {
				return actor.StopUnreported(err)
			}
		}
	}
	if err := s.spec.check(); err != nil {
		// Returned to the starter, which reports it; no crash report too.
		return actor.StopUnreported(err.(StartSpecError))
	}
	if s.spec.Strategy == SimpleOneForOne {
		s.started(c)
		return nil
	}
	for _, cs := range s.spec.Children {
		ch := &child{spec: cs}
		s.kids = append(s.kids, ch)
		if reason, ok := s.startChild(c, ch); !ok {
			// OTP 25's start_children writes start_error before init
			// fails, not only for restarts.
			s.report(c, actor.Report{Context: "start_error", ChildID: cs.ID, Reason: reason},
				"child %v failed to start: %v", cs.ID, reason)
			s.kids = s.kids[:len(s.kids)-1]
			s.terminateAll(c)
			return actor.Stop(actor.ShutdownWith{Reason: FailedToStartChild{ID: cs.ID, Reason: reason}})
		}
		if ch.pid.IsZero() && cs.Restart == Temporary {
			s.kids = s.kids[:len(s.kids)-1]
		}
	}
	s.started(c)
	return nil
}

// started calls the Started hook: every child of the spec has started.
func (s *sup) started(*actor.Context) {
	if h := s.spec.Hooks; h != nil && h.Started != nil {
		h.Started(s.self)
	}
}

// startChild starts ch; on success ch.pid is set (zero if ignored).
func (s *sup) startChild(c *actor.Context, ch *child) (reason actor.Reason, ok bool) {
	pid, err := s.callStart(c, ch)
	ch.restarting = false
	if errors.Is(err, actor.ErrIgnore) || (err == nil && pid.IsZero()) {
		ch.pid = actor.Pid{}
		return nil, true
	}
	if err == nil && !pid.IsRemote() { // a remote child (dist's RemoteChild) is signalled through its node
		if _, ierr := c.System().Info(pid); errors.Is(ierr, actor.ErrBadPid) {
			// Another System's pid (or a forged one): it cannot be
			// linked, monitored or stopped from here. Taken as the
			// running child, it hung the supervisor at its stop, which
			// waited for a Down its failed monitor could never send
			// (TestStartFuncForeignPidFailsTheStart).
			err = fmt.Errorf("%w: the child's Start returned %v, not a pid of the supervisor's System", actor.ErrBadPid, pid)
		}
	}
	if err != nil {
		ch.pid = actor.Pid{}
		var se *actor.StartError
		if errors.As(err, &se) {
			return se.Reason, false
		}
		return err, false
	}
	ch.pid = pid
	s.byPid[pid] = ch
	return nil, true
}

// callStart runs the StartFunc; a panic is a start error (OTP catches the
// start function's crash), unless the supervisor itself is being killed.
func (s *sup) callStart(c *actor.Context, ch *child) (pid actor.Pid, err error) {
	defer func() {
		if r := recover(); r != nil {
			if !c.System().Alive(c.Self()) {
				panic(r)
			}
			pid, err = actor.Pid{}, &actor.StartError{Reason: actor.Panic{Value: r}}
		}
	}()
	return ch.spec.Start(c, ch.args...)
}

func (s *sup) HandleCast(*actor.Context, any) {}

func (s *sup) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Exit:
		if ch := s.byPid[m.From]; ch != nil && ch.pid == m.From {
			s.childExited(c, ch, m.Reason)
		}
	case tryAgain:
		if s.retry[m.ch] && m.ch.restarting {
			delete(s.retry, m.ch)
			if s.spec.Strategy == SimpleOneForOne || slices.Contains(s.kids, m.ch) {
				s.restart(c, m.ch)
			}
		}
	}
}

// childExited applies the restart type, then the strategy.
func (s *sup) childExited(c *actor.Context, ch *child, reason actor.Reason) {
	old := ch.pid
	delete(s.byPid, old)
	restart := shouldRestart(ch.spec.Restart, reason)
	if ch.spec.Restart == Permanent || !isNormalExit(reason) {
		// OTP's supervisor report child_terminated: any exit of a permanent
		// child, an abnormal one of any other. Extra says whether a restart
		// follows (one the intensity may still refuse), for counters that
		// watch reports (observer/prom's restarts).
		s.report(c, actor.Report{Context: "child_terminated", ChildID: ch.spec.ID, ChildPids: []actor.Pid{old}, Reason: reason,
			Extra: []slog.Attr{slog.Bool("restart", restart)}},
			"child %v (%v) terminated: %v", ch.spec.ID, old, reason)
	}
	if h := s.spec.Hooks; h != nil && h.ChildExited != nil {
		h.ChildExited(s.self, ch.spec.ID, old, reason, restart)
	}
	if !restart {
		s.delChild(ch)
		if s.autoShutdown(ch) {
			c.Stop(actor.Shutdown)
		}
		return
	}
	s.restart(c, ch)
}

// restart counts a restart against the intensity and restarts by strategy.
func (s *sup) restart(c *actor.Context, ch *child) {
	old := ch.pid
	if !s.in.add(s.now()) {
		// OTP's supervisor report: shutdown, reached_max_restart_intensity.
		s.report(c, actor.Report{Context: "shutdown", ChildID: ch.spec.ID, Reason: actor.Atom("reached_max_restart_intensity")},
			"shutdown: reached max restart intensity (child %v)", ch.spec.ID)
		if h := s.spec.Hooks; h != nil && h.GaveUp != nil {
			h.GaveUp(s.self)
		}
		s.delChild(ch)
		c.Stop(actor.Shutdown)
		return
	}
	ch.pid = actor.Pid{}
	var failed *child
	var failedReason actor.Reason
	switch s.spec.Strategy {
	case OneForOne, SimpleOneForOne:
		if r, ok := s.startChild(c, ch); !ok {
			failed, failedReason = ch, r
		}
		if s.spec.Strategy == SimpleOneForOne {
			// A dynamic child stays in dyn while its restart is retried,
			// under the pid it had (OTP's {restarting, OldPid}): listed,
			// counted, and TerminateChildPid of that pid cancels the retry.
			delete(s.dyn, ch.key)
			switch {
			case failed != nil:
				if !old.IsZero() {
					ch.key = old
				}
				s.dyn[ch.key] = ch
			case !ch.pid.IsZero():
				ch.key = ch.pid
				s.dyn[ch.key] = ch
			}
		}
		s.restarted(ch, old)
	case OneForAll, RestForOne:
		from := 0
		if s.spec.Strategy == RestForOne {
			from = slices.Index(s.kids, ch)
		}
		s.terminateRange(c, from)
		for _, k := range slices.Clone(s.kids[from:]) {
			if r, ok := s.startChild(c, k); !ok {
				failed, failedReason = k, r
				break
			}
			if k == ch {
				s.restarted(k, old)
			} else {
				s.restarted(k, actor.Pid{})
			}
		}
	}
	if failed != nil {
		// OTP's supervisor report start_error; the restart is retried.
		s.report(c, actor.Report{Context: "start_error", ChildID: failed.spec.ID, Reason: failedReason},
			"child %v failed to restart: %v", failed.spec.ID, failedReason)
		failed.restarting = true
		s.retry[failed] = true
		c.Send(c.Self(), tryAgain{failed})
	}
}

// report writes one supervisor report through the System's Logger, unless
// the supervisor has been killed: its handler may run on (in a StartFunc, in
// a shutdown), and what it does then is not reported, as the runtime
// reports nothing a killed actor's handler does (Config.Logger); a killed
// OTP supervisor is gone. (Otherwise it would report the restart its
// orphaned handler then failed: start_error, noproc.)
// r carries the report's fields; format and args its text, after the
// supervisor's name.
func (s *sup) report(c *actor.Context, r actor.Report, format string, args ...any) {
	if !c.System().Alive(s.self) {
		return
	}
	who := s.self.String()
	if s.spec.Name != "" { // named as OTP's reports name it ({local, Name})
		who = s.spec.Name + " " + who
	}
	r.Kind, r.Pid, r.Name = actor.SupervisorReport, s.self, s.spec.Name
	r.Text = fmt.Sprintf("supervisor %s: "+format, append([]any{who}, args...)...)
	c.System().Report(r)
}

func (s *sup) restarted(ch *child, old actor.Pid) {
	if h := s.spec.Hooks; h != nil && h.Restarted != nil && !ch.pid.IsZero() {
		h.Restarted(s.self, ch.spec.ID, old, ch.pid)
	}
}

// delChild forgets a dead child: a temporary (or dynamic) one is removed,
// any other keeps its spec with no pid.
func (s *sup) delChild(ch *child) {
	delete(s.byPid, ch.pid)
	if s.spec.Strategy == SimpleOneForOne {
		delete(s.dyn, ch.key)
		ch.pid = actor.Pid{}
		return
	}
	ch.pid = actor.Pid{}
	if ch.spec.Restart == Temporary {
		if i := slices.Index(s.kids, ch); i >= 0 {
			s.kids = slices.Delete(s.kids, i, i+1)
		}
	}
}

// autoShutdown reports whether the end of significant child ch stops the
// supervisor.
func (s *sup) autoShutdown(ch *child) bool {
	if !ch.spec.Significant {
		return false
	}
	switch s.spec.AutoShutdown {
	case AnySignificant:
		return true
	case AllSignificant:
		for _, k := range s.kids {
			if k.spec.Significant && (!k.pid.IsZero() || k.restarting) {
				return false
			}
		}
		for _, k := range s.dyn {
			if k.spec.Significant {
				return false
			}
		}
		return true
	}
	return false
}

// terminateRange stops kids[from:] in reverse order; temporary ones are
// removed, the others keep their spec with no pid.
func (s *sup) terminateRange(c *actor.Context, from int) {
	for i := len(s.kids) - 1; i >= from; i-- {
		k := s.kids[i]
		if !k.pid.IsZero() {
			s.stopChild(c, k)
		}
		k.restarting = false
		if k.spec.Restart == Temporary {
			s.kids = slices.Delete(s.kids, i, i+1)
		}
	}
}

// stopChild runs the shutdown protocol on a running child, and reports a
// child that did not exit as asked (OTP 25's do_terminate: shutdown_error).
// Without the report, a child killed after its timeout, or one whose crash
// the stop overtook, would go unreported by the supervisor.
func (s *sup) stopChild(c *actor.Context, k *child) actor.Reason {
	pid := k.pid
	delete(s.byPid, pid)
	k.pid = actor.Pid{}
	sd := k.spec.shutdown()
	r := shutdownChild(c, pid, sd)
	if !shutdownOK(k.spec, sd, r) {
		s.report(c, actor.Report{Context: "shutdown_error", ChildID: k.spec.ID, ChildPids: []actor.Pid{pid}, Reason: r},
			"child %v (%v) shutdown error: %v", k.spec.ID, pid, r)
		s.shutdownError(k.spec.ID, pid, r)
	}
	return r
}

// shutdownError calls Hooks.ShutdownError, if set.
func (s *sup) shutdownError(id string, pid actor.Pid, r actor.Reason) {
	if h := s.spec.Hooks; h != nil && h.ShutdownError != nil {
		h.ShutdownError(s.self, id, pid, r)
	}
}

// shutdownOK reports whether r is an exit that stopping the child asked for
// (OTP 25's shutdown/2 and do_terminate): killed by BrutalKill, shutdown
// (from a BrutalKill only if not permanent), normal or {shutdown, _} if
// not permanent. A noproc left by flushExit (the child died before the
// monitor, and its Exit, if any, was not found) is not reported: its real
// reason is unknown.
func shutdownOK(cs ChildSpec, sd time.Duration, r actor.Reason) bool {
	switch {
	case r == actor.Reason(actor.NoProc):
		return true
	case sd == BrutalKill && r == actor.Reason(actor.Killed):
		return true
	case r == actor.Reason(actor.Shutdown):
		return sd != BrutalKill || cs.Restart != Permanent
	case actor.IsShutdown(r) || actor.IsNormal(r):
		// {shutdown, _} too, as OTP 25 accepts it from a child that is
		// not permanent (not a shutdown error).
		return cs.Restart != Permanent
	}
	return false
}

// shutdownChild is OTP's shutdown/2 (see the design note). It returns the
// reason the child exited with.
func shutdownChild(c *actor.Context, pid actor.Pid, sd time.Duration) actor.Reason {
	ref, err := c.Monitor(pid)
	if errors.Is(err, actor.ErrNoRoute) {
		// A remote pid on a System without distribution: no Down can
		// come; waiting for one would hang the supervisor.
		return actor.NoConnection
	}
	r := signalAndAwait(c, pid, ref, sd)
	c.Unlink(pid)
	return flushExit(c, pid, r)
}

// signalAndAwait sends the stop signal shutdownChild's timeout calls for and
// waits for the Down of ref, killing the child if the timeout runs out.
func signalAndAwait(c *actor.Context, pid actor.Pid, ref actor.Ref, sd time.Duration) actor.Reason {
	if sd != BrutalKill {
		c.Exit(pid, actor.Shutdown)
		if r, ok := awaitDown(c, ref, sd); ok {
			return r
		}
	}
	c.Exit(pid, actor.Kill)
	r, _ := awaitDown(c, ref, actor.Infinity)
	return r
}

// flushExit takes out of the mailbox the Exit of the link to pid, a child
// just stopped and unlinked (OTP 25's unlink_flush). For a
// child that was dead before the monitor (Down reason noproc) its reason is
// the one the child died with: OTP reports that crash as a shutdown_error;
// left in the mailbox, the Exit would be ignored as from an unknown pid and
// the crash go unreported. After Unlink the Exit is either
// queued already or never comes, so looking once is enough (a zero-timeout
// Receive sees every message sent before it, even one behind another
// sender's unfinished push).
func flushExit(c *actor.Context, pid actor.Pid, r actor.Reason) actor.Reason {
	m, err := c.Receive(func(m any) bool {
		e, ok := m.(actor.Exit)
		return ok && e.From == pid
	}, 0)
	if err == nil && r == actor.Reason(actor.NoProc) {
		return m.(actor.Exit).Reason
	}
	return r
}

// awaitDown waits for the Down of ref and returns its reason; ok is false
// on timeout. A Reason is any value, nil included: a nil reason meant
// "timed out" here, and a child that exited with it was taken for one that
// did not, killed, and waited for again, for ever
// (TestStopChildExitingWithNilReason).
func awaitDown(c *actor.Context, ref actor.Ref, d time.Duration) (r actor.Reason, ok bool) {
	m, err := c.Receive(func(m any) bool {
		dn, ok := m.(actor.Down)
		return ok && dn.Ref == ref
	}, d)
	if err != nil {
		return nil, false
	}
	return m.(actor.Down).Reason, true
}

// terminateAll stops every child: static ones in reverse start order,
// dynamic ones all at once.
func (s *sup) terminateAll(c *actor.Context) {
	if s.spec.Strategy == SimpleOneForOne {
		s.terminateDynamic(c)
		return
	}
	s.terminateRange(c, 0)
}

// terminateDynamic stops the SimpleOneForOne children at once (OTP 25's
// terminate_dynamic_children): monitor and signal each, still linked (see
// the design note); then collect the Downs within the template's timeout,
// then kill the rest, unlinking each child at its Down. A child's link
// Exit comes before its Unlink returns or never; the wait takes the Exits
// with the Downs, in one pass, so that they never pile up behind a
// selective receive (nearly every child leaves one).
func (s *sup) terminateDynamic(c *actor.Context) {
	tmpl := s.spec.Children[0]
	asked := tmpl.shutdown()
	sig, sd := actor.Reason(actor.Shutdown), asked
	if asked == BrutalKill {
		sig, sd = actor.Kill, actor.Infinity
	}
	refs := make(map[actor.Ref]actor.Pid, len(s.dyn))
	linked := make(map[actor.Pid]bool, len(s.dyn)) // children whose link's Exit may be queued
	for _, k := range s.dyn {
		if k.restarting {
			delete(s.retry, k) // no process to stop; the retry is cancelled
			continue
		}
		pid := k.pid
		ref, _ := c.Monitor(pid)
		c.Exit(pid, sig)
		refs[ref] = pid
		linked[pid] = true
		delete(s.byPid, pid)
	}
	s.dyn = map[actor.Pid]*child{}
	type exited struct {
		pid    actor.Pid
		reason actor.Reason
	}
	downs := make([]exited, 0, len(refs))
	exits := map[actor.Pid]actor.Reason{} // reasons from the links' Exits
	linkExit := func(m any) bool { e, ok := m.(actor.Exit); return ok && linked[e.From] }
	match := func(m any) bool {
		if d, ok := m.(actor.Down); ok {
			_, mine := refs[d.Ref]
			return mine
		}
		return linkExit(m)
	}
	take := func(m any) {
		switch m := m.(type) {
		case actor.Down:
			pid := refs[m.Ref]
			downs = append(downs, exited{pid, m.Reason})
			delete(refs, m.Ref)
			c.Unlink(pid)
		case actor.Exit:
			exits[m.From] = m.Reason
			delete(linked, m.From)
		}
	}
	var deadline time.Time
	if sd != actor.Infinity {
		deadline = time.Now().Add(sd)
	}
	for len(refs) > 0 {
		wait := actor.Infinity
		if !deadline.IsZero() {
			if wait = time.Until(deadline); wait < 0 {
				wait = 0
			}
		}
		m, err := c.Receive(match, wait)
		if err != nil {
			break
		}
		take(m)
	}
	for _, pid := range refs {
		c.Exit(pid, actor.Kill)
	}
	for len(refs) > 0 {
		m, _ := c.Receive(match, actor.Infinity)
		take(m)
	}
	// The Exits queued after the last Down (unlink_flush).
	for len(linked) > 0 {
		m, err := c.Receive(linkExit, 0)
		if err != nil {
			break
		}
		take(m)
	}
	// One shutdown_error report per reason, as OTP 25's
	// terminate_dynamic_children writes (see stopChild). A Down's noproc (the child was dead before
	// the monitor) gives way to the reason its link's Exit carried.
	type badExit struct {
		reason actor.Reason
		pids   []actor.Pid
	}
	var bad []*badExit              // in the order of their first Down
	byText := map[string]*badExit{} // reasons compared as printed: any value may be one
	for _, d := range downs {
		r := d.reason
		if e, ok := exits[d.pid]; ok && r == actor.Reason(actor.NoProc) {
			r = e
		}
		if shutdownOK(tmpl, asked, r) {
			continue
		}
		s.shutdownError(tmpl.ID, d.pid, r)
		key := fmt.Sprint(r)
		b := byText[key]
		if b == nil {
			b = &badExit{reason: r}
			byText[key] = b
			bad = append(bad, b)
		}
		b.pids = append(b.pids, d.pid)
	}
	for _, b := range bad {
		s.report(c, actor.Report{Context: "shutdown_error", ChildID: tmpl.ID, ChildPids: b.pids, Reason: b.reason},
			"child %v (%v) shutdown error: %v", tmpl.ID, b.pids, b.reason)
	}
}

// Terminate stops the children when the supervisor stops: asked by its
// parent, or on its own (intensity exceeded, auto_shutdown).
func (s *sup) Terminate(c *actor.Context, _ actor.Reason) { s.terminateAll(c) }

func isNormalExit(r actor.Reason) bool { return actor.IsNormal(r) || actor.IsShutdown(r) }
