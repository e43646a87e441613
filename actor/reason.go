package actor

import "fmt"

// A Reason is why an actor exited: any value, as in Erlang. The runtime's own
// reasons are the Atoms below and the types ShutdownWith and Panic; any other
// value (an error, a string, a struct) is a user reason and counts as
// abnormal. Reasons are compared with ==, so a user reason should be a
// comparable value. A nil reason means Normal wherever a reason is given
// (Context.Stop, Context.Exit, System.Exit, StopServer, Init's Stop): the
// actor exits, or the signal is taken, as with Normal, and every Down,
// Exit and *StartError about it says Normal.
type Reason = any

// Atom is a symbolic reason or tag, Erlang's atom.
type Atom string

func (a Atom) String() string { return string(a) }

// The reasons the runtime gives meaning to.
const (
	// Normal: a clean exit. It does not propagate along links to
	// non-trapping actors.
	Normal Atom = "normal"
	// Shutdown: an orderly stop requested by a supervisor or the System.
	// Supervisors do not restart transient children that exit with it.
	Shutdown Atom = "shutdown"
	// Kill: the untrappable exit signal. The target dies with Killed.
	Kill Atom = "kill"
	// Killed: the exit reason of an actor that received Kill.
	Killed Atom = "killed"
	// NoProc: the reason of a Down or Exit about a pid that was already dead.
	NoProc Atom = "noproc"
	// NoConnection is reserved for distribution; unused on one node.
	NoConnection Atom = "noconnection"
)

// ShutdownWith is Erlang's {shutdown, Term}: an orderly stop carrying detail.
// Like Shutdown, it is not restarted for transient children and is not
// logged as a crash.
type ShutdownWith struct{ Reason any }

func (s ShutdownWith) String() string { return fmt.Sprintf("{shutdown,%v}", s.Reason) }

// Unwrap exposes the error the reason carries, if any (see ReasonError),
// so that errors.Is and errors.As reach it through a *StartError.
func (s ShutdownWith) Unwrap() error { return ReasonError(s.Reason) }

// ReasonError returns the error an exit reason carries: the reason itself
// if it is an error, else what its Unwrap() error method gives
// (ShutdownWith, supervisor.FailedToStartChild: OTP's nested reasons such
// as {shutdown, {failed_to_start_child, Id, Err}}), ErrTimeout for
// Atom("timeout") (a start's InitTimeout: so a nested child's init timeout
// is ErrTimeout to errors.Is, as its own *StartError is), else nil.
func ReasonError(r Reason) error {
	switch r := r.(type) {
	case error:
		return r
	case interface{ Unwrap() error }:
		return r.Unwrap()
	case Atom:
		if r == "timeout" {
			return ErrTimeout
		}
	}
	return nil
}

// Panic is the exit reason of an actor whose handler panicked. Stack is the
// goroutine stack at the panic, kept whole so a supervisor's log shows where.
type Panic struct {
	Value any
	Stack string
}

func (p Panic) String() string { return fmt.Sprintf("{panic,%v}", p.Value) }

// Error makes a Panic usable as an error.
func (p Panic) Error() string { return fmt.Sprintf("actor panicked: %v", p.Value) }

// Unwrap exposes the panic's value if it is an error, so that errors.Is
// and errors.As reach it (ErrGoexit, through a *StartError too).
func (p Panic) Unwrap() error { err, _ := p.Value.(error); return err }

// IsNormal reports whether r is Normal.
func IsNormal(r Reason) bool { a, ok := r.(Atom); return ok && a == Normal }

// IsShutdown reports whether r is Shutdown or a ShutdownWith.
func IsShutdown(r Reason) bool {
	switch v := r.(type) {
	case Atom:
		return v == Shutdown
	case ShutdownWith:
		return true
	}
	return false
}

// Exit is the message a trapping actor receives for an exit signal: from a
// linked actor that died, or from Exit(pid, reason).
type Exit struct {
	From   Pid
	Reason Reason
}

// Ref is a unique reference, Erlang's make_ref(): monitors and calls carry
// one. The zero Ref is never issued.
type Ref uint64

func (r Ref) String() string { return fmt.Sprintf("#Ref<%d>", uint64(r)) }

// Down is the message a monitoring actor receives, exactly once per
// monitor, when the monitored actor dies (or at once, with Reason NoProc, if
// it was already dead). Name is set for a monitor taken by name
// (Context.MonitorName), as OTP's DOWN names {Name, Node}: Pid is then the
// actor that held the name when the monitor was taken, or the zero Pid if
// nobody did.
type Down struct {
	Ref    Ref
	Pid    Pid
	Reason Reason
	Name   string
	// Node is the node of a monitor by name on another node
	// (Context.MonitorNameAt), as in OTP's {Name, Node}; empty otherwise.
	Node Atom
}

// ReceiveTimeout is the message an actor receives when it has been idle for
// the duration set with Context.SetReceiveTimeout.
type ReceiveTimeout struct{ seq uint32 }
