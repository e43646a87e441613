package monitor

import "fmt"

// Kind classifies an exit reason for Route, so that this package needs none of
// the actor package's reason types. The actor package maps its reasons:
//
//	normal                                    -> Normal
//	kill                                      -> Kill
//	anything else: shutdown, {shutdown, _},
//	killed, noproc, a panic, a user reason    -> Other
//
// The same mapping serves both kinds of signal: a link exit signal whose
// reason is kill is routed like Other (see Route).
type Kind uint8

const (
	_ Kind = iota // the zero Kind is invalid: an unclassified reason is a bug
	// Normal is the reason normal.
	Normal
	// Kill is the reason kill.
	Kill
	// Other is any other reason, killed included.
	Other
)

var kindNames = [...]string{"Kind(0)", "Normal", "Kill", "Other"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Signal is an exit signal arriving at a process, as Route sees it.
type Signal struct {
	// Kind classifies the signal's reason.
	Kind Kind
	// Link is true for a link exit signal: the signal a dying process sends
	// each linked peer, carrying its own exit reason (also the noproc signal
	// of a link to a dead pid). It is false for a signal sent explicitly with
	// exit(Pid, Reason) (erlang:exit/2; in Colony, Exit on a pid).
	Link bool
}

// Action is what the receiving process does with an exit signal.
type Action uint8

const (
	_ Action = iota
	// Ignore drops the signal; the process runs on.
	Ignore
	// DeliverExit turns the signal into an Exit{From, Reason} message
	// ({'EXIT', From, Reason}) in the process's mailbox.
	DeliverExit
	// Die terminates the process with the signal's reason.
	Die
	// DieKilled terminates the process with the reason killed.
	DieKilled
)

var actionNames = [...]string{"Action(0)", "Ignore", "DeliverExit", "Die", "DieKilled"}

func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Route decides what a process does with an exit signal: trapping is its
// trap_exit flag, fromSelf whether the process sent the signal to itself.
// The rules, in order (OTP 25; TestRouteMatchesOTP checks all of them against
// a real Erlang node running testdata/route.escript):
//
//  1. exit(Pid, kill) is untrappable: the target dies with reason killed,
//     trapping or not, even when it sent the signal to itself (erlang:exit/2:
//     "an untrappable exit signal is sent ... which unconditionally exits
//     with exit reason killed").
//  2. Any other signal to a trapping process becomes an Exit message
//     (process_flag(trap_exit, true): "exit signals arriving to a process
//     are converted to {'EXIT', From, Reason} messages"). This includes
//     normal, exit(self(), normal), and a link exit signal with reason kill.
//  3. Reason normal to a process not trapping exits is ignored
//     (erlang:exit/2: "the signal has no effect if P is not trapping exits";
//     link/1: a normal exit of a linked process does not kill its peers),
//     except that exit(self(), normal) terminates the caller with reason
//     normal (erlang:exit/2, the warning on sending normal to oneself).
//  4. Any other reason to a process not trapping exits kills it with the same
//     reason. A link exit signal with reason kill (a linked process ran
//     exit(kill) on itself) is such a reason: it is trappable, and its
//     non-trapping peers die with kill, not killed. A peer of a process
//     killed by exit(Pid, kill) receives killed, also an ordinary reason
//     (erlang:exit/2: the reason becomes killed "to hint to linked processes
//     that the killed process got killed").
//
// Monitors are never routed: a Down is always a message, trapping or not.
//
// Route panics on a signal whose Kind is not Normal, Kill or Other, and on a
// link exit signal from the process itself, which cannot exist (link/1: "if a
// process attempts to create a link to itself, nothing is done").
func Route(sig Signal, trapping, fromSelf bool) Action {
	if sig.Kind < Normal || sig.Kind > Other {
		panic(fmt.Sprintf("monitor: Route: invalid reason kind %v (map every reason to Normal, Kill or Other)", sig.Kind))
	}
	if sig.Link && fromSelf {
		panic("monitor: Route: a link exit signal from the process itself (a process cannot be linked to itself)")
	}
	switch {
	case sig.Kind == Kill && !sig.Link: // rule 1
		return DieKilled
	case trapping: // rule 2
		return DeliverExit
	case sig.Kind == Normal: // rule 3
		if fromSelf {
			return Die
		}
		return Ignore
	default: // rule 4: Other, or kill carried by a link
		return Die
	}
}
