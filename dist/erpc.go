package dist

// erpc:call and erpc:cast of Go functions.
//
// erpc:call(Node, M, F, A) does not call anything on Node: it sends a
// spawn request for erpc:execute_call(Ref, M, F, A) with a monitor, and the
// spawned process runs M:F(A...) and exits with {Ref, return, Value} (or
// {Ref, throw | exit, R}, or {Ref, error, R, Stack}); the caller reads the
// result from the monitor's DOWN. erpc:cast is execute_cast(M, F, A),
// with no monitor and no result. No Erlang code runs on a Go node, so a
// request for erpc:execute_call or execute_cast is served by an actor that
// runs the Go function registered for {M, F} (RegisterRPC, named as for
// RegisterSpawn) and exits as erpc's process does: the call's value, a Go
// error as error {exception, Text, []} at the caller, a panic as error
// {exception, {panic, Text}, []}, and an {M, F} nothing registered as undef,
// exactly as an Erlang node answers a function that does not exist.

import (
	"fmt"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// RPCFunc is a function peers run on this node with erpc:call or
// erpc:cast (see RegisterRPC). It runs in an actor of its own (c), with
// the call's arguments as decoded terms; its value is the caller's result,
// its error the caller's error {exception, Text, []}.
type RPCFunc func(c *actor.Context, args []any) (any, error)

var (
	atomErpc        = actor.Atom("erpc")
	atomExecCall    = actor.Atom("execute_call")
	atomExecCast    = actor.Atom("execute_cast")
	atomReturn      = actor.Atom("return")
	atomUndef       = actor.Atom("undef")
	atomPanicReason = actor.Atom("panic")
)

// RegisterRPC makes f the function that erpc:call(Node, M, F, Args) and
// erpc:cast run on this node, named as for RegisterSpawn: "M:F", or a
// plain name for M = colony. Errors: ErrSpawnRegistered, ErrBadConfig for
// an empty name or a nil f.
func (n *Node) RegisterRPC(name string, f RPCFunc) error {
	if name == "" || f == nil {
		return fmt.Errorf("%w: RegisterRPC needs a name and a func", ErrBadConfig)
	}
	t := &n.spawns
	t.mu.Lock()
	defer t.mu.Unlock()
	return registerLocked(&t.rpcs, name, f)
}

// rpcFunc finds the function for {m, f} (see RegisterRPC).
func (n *Node) rpcFunc(m, f actor.Atom) RPCFunc {
	t := &n.spawns
	t.mu.RLock()
	defer t.mu.RUnlock()
	rf, _ := lookupMF(t.rpcs, m, f)
	return rf
}

// erpcActor is the actor serving a spawn request for erpc:f(args...), or
// nil if f and args are not erpc's execute_call/4 or execute_cast/3.
func (n *Node) erpcActor(f actor.Atom, args []any) actor.Actor {
	var res any
	switch {
	case f == atomExecCall && len(args) == 4:
		res, args = args[0], args[1:]
	case f == atomExecCast && len(args) == 3:
	default:
		return nil
	}
	m, ok1 := args[0].(actor.Atom)
	fn, ok2 := args[1].(actor.Atom)
	a, ok3 := args[2].([]any)
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	return &erpcRun{n: n, res: res, call: f == atomExecCall, m: m, f: fn, args: a, fn: n.rpcFunc(m, fn)}
}

// erpcRun runs one erpc request's function in its Init and exits with the
// result erpc's caller reads from its DOWN.
type erpcRun struct {
	n    *Node
	res  any // the caller's result reference (execute_call)
	call bool
	m, f actor.Atom
	args []any
	fn   RPCFunc // nil: nothing registered (undef)
}

func (r *erpcRun) Init(c *actor.Context) {
	if r.fn == nil {
		r.n.logf(levelInfo, "dist: erpc of %s:%s/%d, which is not registered (RegisterRPC)", r.m, r.f, len(r.args))
		r.exit(c, etf.Tuple{r.res, atomError, atomUndef, []any{etf.Tuple{r.m, r.f, r.args, []any{}}}})
		return
	}
	v, err := r.run(c)
	switch {
	case err != nil:
		r.exit(c, etf.Tuple{r.res, atomError, errorText(err), []any{}})
	default:
		if _, eerr := r.n.enc.Append(nil, v); eerr != nil {
			r.exit(c, etf.Tuple{r.res, atomError, "dist: result not sent: " + eerr.Error(), []any{}})
			return
		}
		r.exit(c, etf.Tuple{r.res, atomReturn, v})
	}
}

// run calls the function; a panic is its error.
func (r *erpcRun) run(c *actor.Context) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, panicError{p}
		}
	}()
	return r.fn(c, r.args)
}

type panicError struct{ v any }

func (e panicError) Error() string { return fmt.Sprint(e.v) }

// errorText is a Go error as the reason of erpc's error class: its text,
// or {panic, Text} for a panic.
func errorText(err error) any {
	if p, ok := err.(panicError); ok {
		return etf.Tuple{atomPanicReason, p.Error()}
	}
	return err.Error()
}

// exit ends the actor as erpc's process ends: with the result for a call,
// normally for a cast.
func (r *erpcRun) exit(c *actor.Context, result etf.Tuple) {
	if !r.call {
		c.Stop(actor.Normal)
		return
	}
	c.Stop(result)
}

func (r *erpcRun) Receive(*actor.Context, any) {}
