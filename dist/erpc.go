package dist

// erpc:call and erpc:cast of Go functions.
//
// erpc:call(Node, M, F, A) does not call anything on Node: it sends a
// spawn request for erpc:execute_call(Ref, M, F, A) with a monitor, and the
// spawned process runs M:F(A...) and exits with {Ref, return, Value} (or
// {Ref, throw | exit, R}, or {Ref, error, R, Stack}); the caller reads the
// result from the monitor's DOWN. erpc:cast is execute_cast(M, F, A),
// with no monitor and no result. OTP 25's rpc:call, rpc:cast,
// rpc:multicall and rpc:async_call are erpc's (rex.go serves the rest of
// rpc). No Erlang code runs on a Go node, so a request for
// erpc:execute_call or execute_cast is served by an actor that runs what
// applyMFA finds for {M, F, Arity} (bif.go: a BIF, or the Go function
// registered with RegisterRPC) and exits as erpc's process does: the
// call's value, a Go error as error {exception, Text, []} at the caller, a
// panic as error {exception, {panic, Text}, []}, and an {M, F, Arity}
// nothing answers as undef, exactly as an Erlang node answers a function
// that does not exist.
//
// Names. RegisterRPC("M:F/N", f) registers f for arity N only, as an
// Erlang function is defined: a call of another arity is undef.
// RegisterRPC("M:F", f), with no arity, takes every arity (f checks its
// arguments): the form for functions of variable arguments. "F/N" and "F"
// are M = colony's, as RegisterSpawn names them. A call looks for the
// arity's name first, then the name without arity.

import (
	"fmt"
	"strconv"
	"strings"

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

// RegisterRPC makes f the function that erpc:call(Node, M, F, Args),
// erpc:cast and rpc's calls and casts run on this node. name is "M:F/N"
// for arity N (0..255) only, as an Erlang function is defined, or "M:F"
// for any arity; "F/N" and "F" for M = colony. A call of {M, F} with an
// arity that nothing is registered for is undef at the caller. The BIFs
// this node answers (erlang:node/0, ...; docs/distribution.md) cannot be
// registered. Errors: ErrSpawnRegistered for a name registered already or
// a BIF's, ErrBadConfig for an empty name, a nil f or an arity past 255.
func (n *Node) RegisterRPC(name string, f RPCFunc) error {
	if name == "" || f == nil {
		return fmt.Errorf("%w: RegisterRPC needs a name and a func", ErrBadConfig)
	}
	base, arity, err := rpcName(name)
	if err != nil {
		return err
	}
	if m, fn := spawnMF(base); m == atomErlang {
		for a := 0; a <= maxBIFArity; a++ {
			if (arity == a || arity < 0) && bif(fn, a) != nil {
				return fmt.Errorf("%w: %q is a BIF this node answers", ErrSpawnRegistered, name)
			}
		}
	}
	t := &n.spawns
	t.mu.Lock()
	defer t.mu.Unlock()
	return registerLocked(&t.rpcs, name, f)
}

// rpcName splits a RegisterRPC name into the name without arity and the
// arity (-1: none): a name whose part after its last '/' is a decimal
// number has an arity.
func rpcName(name string) (base string, arity int, err error) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 || i == len(name)-1 {
		return name, -1, nil
	}
	a, cerr := strconv.Atoi(name[i+1:])
	switch {
	case cerr != nil || name[i+1] == '+' || name[i+1] == '-':
		return name, -1, nil // not a number: part of the function's name
	case a > 255 || i == 0:
		return "", 0, fmt.Errorf("%w: RegisterRPC name %q: an arity is 0..255, after a function name", ErrBadConfig, name)
	}
	return name[:i], a, nil
}

// rpcFunc finds the function for {m, f} of arity (see RegisterRPC).
func (n *Node) rpcFunc(m, f actor.Atom, arity int) RPCFunc {
	t := &n.spawns
	t.mu.RLock()
	defer t.mu.RUnlock()
	if rf, ok := lookupMF(t.rpcs, m, actor.Atom(string(f)+"/"+strconv.Itoa(arity))); ok {
		return rf
	}
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
	return &erpcRun{n: n, res: res, call: f == atomExecCall, m: m, f: fn, args: a}
}

// erpcRun runs one erpc request's function in its Init and exits with the
// result erpc's caller reads from its DOWN.
type erpcRun struct {
	n    *Node
	res  any // the caller's result reference (execute_call)
	call bool
	m, f actor.Atom
	args []any
}

func (r *erpcRun) Init(c *actor.Context) {
	o := r.n.applyMFA(c, r.m, r.f, r.args)
	if !r.call {
		c.Stop(actor.Normal)
		return
	}
	switch o.class {
	case atomError:
		c.Stop(etf.Tuple{r.res, atomError, o.value, o.stack})
	default:
		c.Stop(etf.Tuple{r.res, o.class, o.value})
	}
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

func (r *erpcRun) Receive(*actor.Context, any) {}
