package sysmsg

import (
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
)

// GetState returns the state of the Server pid (sys:get_state): the Server
// value its callbacks run on (for a Typed server, the TypedServer). It is
// the server's own value, not a copy: reading it while the server runs is
// a data race unless the server is suspended (Suspend, then GetState, then
// Resume) or the value is immutable. For a snapshot, see GetStatus.
func GetState(c actor.Caller, pid actor.Pid, timeout time.Duration) (any, error) {
	return actor.SysCall(c, pid, actor.SysRequest{Op: actor.SysGetState}, timeout)
}

// ReplaceState runs f on the server's state, on the server's goroutine
// between two callbacks, and makes its result the state
// (sys:replace_state); it returns the new state. f may change the state
// in place and return it, or return a new value of the same type. If f
// panics, or returns a value of another type, the server keeps the value
// it had (one that f changed in place before panicking stays changed) and
// the error is an *actor.SysCallbackError; the server goes on running.
func ReplaceState(c actor.Caller, pid actor.Pid, f func(state any) any, timeout time.Duration) (any, error) {
	return actor.SysCall(c, pid, actor.SysRequest{Op: actor.SysReplaceState, Replace: f}, timeout)
}

// GetStatus returns the status of the Server pid (sys:get_status): its
// name, parent, whether it is suspended, its debug options, and its state
// as actor.StatusFormatter shows it (by default the state's text, made on
// the server's goroutine: a snapshot).
func GetStatus(c actor.Caller, pid actor.Pid, timeout time.Duration) (actor.SysStatus, error) {
	v, err := actor.SysCall(c, pid, actor.SysRequest{Op: actor.SysGetStatus}, timeout)
	if err != nil {
		return actor.SysStatus{}, err
	}
	st, ok := v.(actor.SysStatus)
	if !ok {
		return actor.SysStatus{}, fmt.Errorf("sysmsg: get_status answered %T (a remote process answers a term: use actor.SysCall)", v)
	}
	return st, nil
}

// Suspend suspends the server (sys:suspend): once it has answered, it
// takes only system messages (and its parent's exit signal, and
// actor.StopServer's request, which stop it) until Resume; every other
// message stays in its mailbox, in order.
func Suspend(c actor.Caller, pid actor.Pid, timeout time.Duration) error {
	_, err := actor.SysCall(c, pid, actor.SysRequest{Op: actor.SysSuspend}, timeout)
	return err
}

// Resume resumes a suspended server (sys:resume); it takes the messages
// that waited, in the order they came. Resuming a running server is a
// no-op.
func Resume(c actor.Caller, pid actor.Pid, timeout time.Duration) error {
	_, err := actor.SysCall(c, pid, actor.SysRequest{Op: actor.SysResume}, timeout)
	return err
}

// Stop stops the server as gen_server:stop(Pid, Reason, Timeout) does,
// suspended or not: it runs Terminate with reason (nil: normal) and
// exits with it; Stop returns once it has exited. See actor.SysStop for
// the errors.
func Stop(c actor.Caller, pid actor.Pid, reason actor.Reason, timeout time.Duration) error {
	return actor.SysStop(c, pid, reason, timeout)
}

// Trace turns the server's trace on or off (sys:trace): each message it
// takes and each reply it sends is written as a report (System.Log), as
// OTP's "*DBG*" lines.
func Trace(c actor.Caller, pid actor.Pid, on bool, timeout time.Duration) error {
	return debug(c, pid, actor.SysTrace, on, 0, timeout)
}

// Log turns the server's event log on, keeping its last n events (n <= 0:
// 10), or off with on false (sys:log).
func Log(c actor.Caller, pid actor.Pid, on bool, n int, timeout time.Duration) error {
	return debug(c, pid, actor.SysLog, on, n, timeout)
}

// GetLog returns the events logged, oldest first (sys:log(Name, get)):
// none if the log is off.
func GetLog(c actor.Caller, pid actor.Pid, timeout time.Duration) ([]actor.SysEvent, error) {
	v, err := actor.SysCall(c, pid, actor.SysRequest{Op: actor.SysLog, Flag: actor.SysGet}, timeout)
	if err != nil {
		return nil, err
	}
	ev, ok := v.([]actor.SysEvent)
	if !ok && v != nil {
		return nil, fmt.Errorf("sysmsg: log answered %T (a remote process answers a term: use actor.SysCall)", v)
	}
	return ev, nil
}

// Statistics turns the server's statistics on or off (sys:statistics).
func Statistics(c actor.Caller, pid actor.Pid, on bool, timeout time.Duration) error {
	return debug(c, pid, actor.SysStatistics, on, 0, timeout)
}

// GetStatistics returns the server's statistics (sys:statistics(Name,
// get)), nil if they are off.
func GetStatistics(c actor.Caller, pid actor.Pid, timeout time.Duration) (*actor.SysStats, error) {
	v, err := actor.SysCall(c, pid, actor.SysRequest{Op: actor.SysStatistics, Flag: actor.SysGet}, timeout)
	if err != nil {
		return nil, err
	}
	st, ok := v.(*actor.SysStats)
	if !ok && v != nil {
		return nil, fmt.Errorf("sysmsg: statistics answered %T (a remote process answers a term: use actor.SysCall)", v)
	}
	return st, nil
}

// NoDebug turns every debug option of the server off (sys:no_debug).
func NoDebug(c actor.Caller, pid actor.Pid, timeout time.Duration) error {
	_, err := actor.SysCall(c, pid, actor.SysRequest{Op: actor.SysNoDebug}, timeout)
	return err
}

func debug(c actor.Caller, pid actor.Pid, op actor.SysOp, on bool, n int, timeout time.Duration) error {
	f := actor.SysOff
	if on {
		f = actor.SysOn
	}
	_, err := actor.SysCall(c, pid, actor.SysRequest{Op: op, Flag: f, N: n}, timeout)
	return err
}
