package actor

import (
	"context"
	"errors"

	"github.com/colonyrt/colony/registry"
)

// Operational failures are returned as these sentinel errors (or errors
// wrapping them); test with errors.Is. A caller's misuse of the API (calling
// a Context method from another goroutine, a nil handler in a Server) panics
// with a message instead.
var (
	// ErrNoProc: the pid names no live actor (it died, or never existed in
	// this System). A plain Send to such a pid is not an error (it is
	// dropped and counted, as in Erlang); operations that must reach the
	// actor return it.
	ErrNoProc = errors.New("actor: no such process")
	// ErrBadPid: the pid is the zero Pid, was issued by another System, or
	// names a slot outside the slab.
	ErrBadPid = errors.New("actor: malformed pid")
	// ErrTooManyActors: the slab is full (Config.MaxActors live actors).
	// A slot is freed after its actor's exit has been signalled to links
	// and monitors, so it can be returned briefly after a death is seen.
	ErrTooManyActors = errors.New("actor: too many actors")
	// ErrNilBehaviour: Spawn was given a nil Actor (or a nil ActorFunc), or
	// StartServer or SpawnServer a nil Server.
	ErrNilBehaviour = errors.New("actor: nil behaviour")
	// ErrBadOption: Spawn was given a spawn option with a bad value (a
	// negative MailboxBound); nothing was started.
	ErrBadOption = errors.New("actor: bad spawn option")
	// ErrStopped: the System is shutting down or has shut down. During
	// Shutdown, a Spawn from outside is refused at once; the actors it has
	// not stopped yet keep spawning (a supervisor's restart) and arming
	// timers until its last step, when it kills what is left.
	ErrStopped = errors.New("actor: system stopped")
	// ErrTimeout: a blocking call or receive ran out of time. It follows
	// Go's timeout conventions: errors.Is(ErrTimeout,
	// context.DeadlineExceeded) holds, and it has a Timeout() bool method
	// that reports true (as net's timeouts), so code that maps timeouts
	// (to an HTTP 504, say) needs one check.
	ErrTimeout error = timeoutError{}
	// ErrCallSelf: an actor called itself, which could never be answered.
	ErrCallSelf = errors.New("actor: call to self")
	// ErrNegativeTimeout: a blocking operation was given a negative timeout,
	// or SendAfter a negative delay. Use Infinity to wait forever and 0 to
	// poll (or, for SendAfter, to send at the next timer poll).
	ErrNegativeTimeout = errors.New("actor: negative timeout")
	// ErrMailboxFull: the target's mailbox is bounded and full; the message
	// was not delivered.
	ErrMailboxFull = errors.New("actor: mailbox full")
	// ErrNotRegistered: no actor is registered under the name.
	ErrNotRegistered = errors.New("actor: name not registered")
	// ErrNameTaken: the name is registered to another live actor.
	ErrNameTaken = errors.New("actor: name already registered")
	// ErrAlreadyNamed: the actor already holds another registered name.
	ErrAlreadyNamed = errors.New("actor: actor already has a registered name")
	// ErrBadName: the empty name cannot be registered (nor unregistered).
	ErrBadName = errors.New("actor: empty name")
	// ErrNotJoined: LeaveGroup of a group the pid has no join left in
	// (pg's not_joined). It is registry.ErrNotJoined, so either matches.
	ErrNotJoined = registry.ErrNotJoined
	// ErrNotOwner: a timer or socket operation on something the caller
	// does not own.
	ErrNotOwner = errors.New("actor: not the owner")
	// ErrNilSystem: a function that takes a *System was given nil.
	ErrNilSystem = errors.New("actor: nil System")
	// ErrBadConfig: Start was given a Config it cannot honour (a negative
	// count, or one past its limit); the error says which field.
	ErrBadConfig = errors.New("actor: bad Config")
	// ErrNilContext: Wait or Shutdown was given a nil context.Context
	// (context.Background() waits without limit). Nothing was done.
	ErrNilContext = errors.New("actor: nil Context")
)

// timeoutError is ErrTimeout's type.
type timeoutError struct{}

func (timeoutError) Error() string { return "actor: timeout" }

// Timeout reports true: net.Error's and os.ErrDeadlineExceeded's method.
func (timeoutError) Timeout() bool { return true }

// Is makes errors.Is(ErrTimeout, context.DeadlineExceeded) hold.
func (timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }
