package supervisor

import (
	"errors"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Strategy says which children a supervisor restarts when one dies.
type Strategy int

const (
	// OneForOne restarts only the child that died (the zero value).
	OneForOne Strategy = iota
	// OneForAll terminates the other children (in reverse start order) and
	// restarts all of them in start order.
	OneForAll
	// RestForOne terminates the children started after the one that died
	// (in reverse order) and restarts it and them, in start order.
	RestForOne
	// SimpleOneForOne supervises dynamic children of one template spec,
	// added with StartChildArgs; they are stopped all at once.
	SimpleOneForOne
)

func (s Strategy) String() string {
	switch s {
	case OneForOne:
		return "one_for_one"
	case OneForAll:
		return "one_for_all"
	case RestForOne:
		return "rest_for_one"
	case SimpleOneForOne:
		return "simple_one_for_one"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// Restart says when a child that died is restarted.
type Restart int

const (
	// Permanent children are always restarted (the zero value).
	Permanent Restart = iota
	// Transient children are restarted only after an abnormal exit (not
	// Normal, Shutdown or ShutdownWith). A kill is abnormal: a transient
	// child killed by Exit(pid, Kill) is restarted, as in OTP; to stop one
	// for good, ask its supervisor (TerminateChild, TerminateChildPid).
	Transient
	// Temporary children are never restarted, and are forgotten once dead.
	Temporary
)

func (r Restart) String() string {
	switch r {
	case Permanent:
		return "permanent"
	case Transient:
		return "transient"
	case Temporary:
		return "temporary"
	}
	return fmt.Sprintf("Restart(%d)", int(r))
}

// ChildType is a child's kind: it changes the default Shutdown and what
// CountChildren and WhichChildren report.
type ChildType int

const (
	Worker     ChildType = iota // the zero value
	Supervisor                  // a child that is itself a supervisor
)

func (t ChildType) String() string {
	if t == Supervisor {
		return "supervisor"
	}
	return "worker"
}

// Shutdown values for ChildSpec.Shutdown besides a positive timeout.
const (
	// BrutalKill kills the child with actor.Kill at once.
	BrutalKill time.Duration = -1
	// Infinity waits for the child to stop, however long it takes (the
	// default for supervisor children).
	Infinity = actor.Infinity
	// DefaultShutdown is a worker's default timeout before the kill.
	DefaultShutdown = 5 * time.Second
)

// AutoShutdown says whether the exit of significant children (see
// ChildSpec.Significant) stops the supervisor (OTP 24's auto_shutdown).
type AutoShutdown int

const (
	Never          AutoShutdown = iota // the zero value: significant children mean nothing
	AnySignificant                     // stop when any significant child ends for good
	AllSignificant                     // stop when all significant children have ended
)

// StartFunc starts a child linked to the supervisor (c is the supervisor's
// context) and returns its pid. It returns the zero Pid and a nil error to
// ignore the child (OTP's ignore), actor.ErrIgnore likewise; any other
// error fails the start, and its reason (actor.StartError.Reason, else the
// error) is reported. A pid of another System fails the start too, with an
// error that is actor.ErrBadPid, unless it is a remote pid (Pid.IsRemote):
// a child on another node, reached through the System's distribution
// (dist's Node.RemoteChild makes such a StartFunc). args are
// StartChildArgs's arguments for a SimpleOneForOne child, empty otherwise.
type StartFunc func(c *actor.Context, args ...any) (actor.Pid, error)

// ChildSpec describes one child. The zero values of Restart, Shutdown and
// Type are OTP's defaults: permanent, 5 s for workers (Infinity for
// supervisors), worker.
type ChildSpec struct {
	ID          string
	Start       StartFunc
	Restart     Restart
	Shutdown    time.Duration // BrutalKill, a timeout, Infinity; 0: default
	Type        ChildType
	Significant bool // with AutoShutdown; only Transient or Temporary children
}

func (cs ChildSpec) shutdown() time.Duration {
	if cs.Shutdown != 0 {
		return cs.Shutdown
	}
	if cs.Type == Supervisor {
		return Infinity
	}
	return DefaultShutdown
}

// Spec describes a supervisor. The zero Spec is a OneForOne supervisor with
// no children and OTP's default intensity, 1 restart in 5 s.
type Spec struct {
	Strategy Strategy
	// Intensity restarts in Period are allowed; one more stops the
	// supervisor with reason actor.Shutdown. A zero Period means the OTP
	// defaults: Period 5 s, and Intensity 1 if it is zero too. To allow no
	// restart at all, give Intensity 0 and a Period.
	Intensity int
	Period    time.Duration
	// AutoShutdown: see the type.
	AutoShutdown AutoShutdown
	// Children are started in order and stopped in reverse order. For
	// SimpleOneForOne, exactly one: the template of the dynamic children.
	Children []ChildSpec
	// Name, if set, registers the supervisor under it.
	Name string
	// Hooks, if set, observe the supervisor (tests, the demo, metrics).
	// Reports need no hook: a supervisor writes OTP's supervisor reports
	// through System.Report (to Config.Reporter, as actor.Report values of
	// kind SupervisorReport, and to Config.Logger): a child terminated
	// (any exit of a permanent child, an abnormal one of any other), a
	// child that failed to start (at the supervisor's start or in a
	// restart), and the shutdown when the restart intensity is exceeded.
	Hooks *Hooks
}

// Hooks are called inside the supervisor, in its actor, after the event;
// they must not block. Any may be nil.
type Hooks struct {
	// ChildExited: a child died with reason; restart tells whether the
	// supervisor will restart it (then Restarted follows, or the
	// supervisor stops with Shutdown because intensity was exceeded).
	ChildExited func(sup actor.Pid, id string, pid actor.Pid, reason actor.Reason, restart bool)
	// Restarted: a child was restarted after a death (not after
	// RestartChild); old is the pid that died, or zero for children
	// restarted because a sibling died.
	Restarted func(sup actor.Pid, id string, old, new actor.Pid)
	// GaveUp: restart intensity was exceeded; the supervisor stops.
	GaveUp func(sup actor.Pid)
	// Started: the supervisor's Init has started every child of its spec
	// (none for SimpleOneForOne) and is about to acknowledge its starter:
	// the tree below it is up. With Run and RunSystem, the top's Started
	// tells a service's main that the whole tree is up.
	Started func(sup actor.Pid)
	// (A child the supervisor stops as asked, by TerminateChild or its
	// own stop, is no exit to report: no hook is called for it.)
	// ShutdownError: a child the supervisor stopped (TerminateChild, the
	// restart of a sibling under OneForAll or RestForOne, or the
	// supervisor's own stop) did not exit as asked: it was killed when
	// its Shutdown timeout ran out, or it exited with another reason
	// first (a crash the stop overtook). OTP's supervisor report
	// shutdown_error, which is also reported (System.Report); once per child,
	// SimpleOneForOne children included.
	ShutdownError func(sup actor.Pid, id string, pid actor.Pid, reason actor.Reason)
}

func (s Spec) limits() (int, time.Duration) {
	if s.Period <= 0 {
		if s.Intensity == 0 {
			return 1, 5 * time.Second
		}
		return s.Intensity, 5 * time.Second
	}
	return s.Intensity, s.Period
}

// check validates a spec as OTP's check_childspecs does.
func (s Spec) check() error {
	if s.Strategy < OneForOne || s.Strategy > SimpleOneForOne {
		return StartSpecError{"bad strategy"}
	}
	if s.Intensity < 0 || s.Period < 0 {
		return StartSpecError{"bad intensity or period"}
	}
	if s.AutoShutdown < Never || s.AutoShutdown > AllSignificant {
		// OTP: {invalid_auto_shutdown, _}; it was taken as Never.
		return StartSpecError{"bad auto shutdown"}
	}
	if s.Strategy == SimpleOneForOne && len(s.Children) != 1 {
		return StartSpecError{"simple_one_for_one needs exactly one child spec"}
	}
	seen := map[string]bool{}
	for _, cs := range s.Children {
		if err := checkChild(cs, s.AutoShutdown); err != nil {
			return err
		}
		if s.Strategy != SimpleOneForOne {
			if seen[cs.ID] {
				return StartSpecError{"duplicate child id " + cs.ID}
			}
			seen[cs.ID] = true
		}
	}
	return nil
}

func checkChild(cs ChildSpec, auto AutoShutdown) error {
	if cs.Start == nil {
		return StartSpecError{"child " + cs.ID + ": nil Start"}
	}
	if cs.Restart < Permanent || cs.Restart > Temporary {
		return StartSpecError{"child " + cs.ID + ": bad restart type"}
	}
	if cs.Type != Worker && cs.Type != Supervisor {
		// OTP: {invalid_child_type, _}; it was counted as a worker.
		return StartSpecError{"child " + cs.ID + ": bad child type"}
	}
	if cs.Significant && cs.Restart == Permanent {
		return StartSpecError{"child " + cs.ID + ": a significant child must be transient or temporary"}
	}
	if cs.Significant && auto == Never {
		// OTP: {bad_combination, [{auto_shutdown, never}, {significant, true}]}.
		return StartSpecError{"child " + cs.ID + ": a significant child needs an AutoShutdown other than Never"}
	}
	if cs.Shutdown < 0 && cs.Shutdown != BrutalKill {
		return StartSpecError{"child " + cs.ID + ": bad shutdown"}
	}
	return nil
}

// Errors of the child-management calls (OTP's {error, ...} results).
var (
	ErrNotFound        = errors.New("supervisor: child not found")            // not_found
	ErrRunning         = errors.New("supervisor: child is running")           // running
	ErrRestarting      = errors.New("supervisor: child is restarting")        // restarting
	ErrAlreadyPresent  = errors.New("supervisor: child spec already present") // already_present
	ErrSimpleOneForOne = errors.New("supervisor: not allowed for simple_one_for_one")
	ErrNotSimple       = errors.New("supervisor: StartChildArgs needs a simple_one_for_one supervisor")
	// ErrGaveUp is Run's error when the top supervisor stopped because its
	// restart intensity was exceeded.
	ErrGaveUp = errors.New("supervisor: the top supervisor gave up: restart intensity exceeded")
)

// AlreadyStartedError: StartChild of an id whose child runs
// ({error, {already_started, Pid}}).
type AlreadyStartedError struct{ Pid actor.Pid }

func (e *AlreadyStartedError) Error() string {
	return fmt.Sprintf("supervisor: child already started: %v", e.Pid)
}

// ChildStartError: the child's Start failed with Reason.
type ChildStartError struct {
	ID     string
	Reason actor.Reason
}

func (e *ChildStartError) Error() string {
	return fmt.Sprintf("supervisor: child %s failed to start: %v", e.ID, e.Reason)
}

// Unwrap exposes the error the child's start failed with, if any.
func (e *ChildStartError) Unwrap() error { return actor.ReasonError(e.Reason) }

// FailedToStartChild is the detail of the supervisor's exit reason
// actor.ShutdownWith{FailedToStartChild{...}} when a child fails to start
// during the supervisor's own start (OTP's
// {shutdown, {failed_to_start_child, Id, Reason}}).
type FailedToStartChild struct {
	ID     string
	Reason actor.Reason
}

func (f FailedToStartChild) String() string {
	return fmt.Sprintf("{failed_to_start_child,%s,%v}", f.ID, f.Reason)
}

// Unwrap exposes the error the child's start failed with, if any, so that
// errors.Is and errors.As reach it through the supervisor's start error.
func (f FailedToStartChild) Unwrap() error { return actor.ReasonError(f.Reason) }

// StartSpecError is the exit reason of a supervisor whose Spec is invalid
// (OTP's {start_spec, Why}); it is also returned as an error.
type StartSpecError struct{ Why string }

func (e StartSpecError) Error() string { return "supervisor: bad spec: " + e.Why }

// ChildInfo is one row of WhichChildren. Pid is zero for a child that is
// not running; Restarting marks one whose restart is pending.
type ChildInfo struct {
	ID         string
	Pid        actor.Pid
	Restarting bool
	Type       ChildType
}

// Counts is CountChildren's answer.
type Counts struct {
	Specs       int // child specs (for SimpleOneForOne: 1)
	Active      int // running children
	Supervisors int // children of type Supervisor, running or not
	Workers     int // children of type Worker, running or not
}
