package dist

// What a peer's erpc or rpc call runs on this node: apply(M, F, Args).
//
// No Erlang code runs on a Go node. A call of {M, F, Args} runs, in this
// order: one of the BIFs below, when M is erlang and F/arity is one of
// them; the Go function registered with RegisterRPC as "M:F/Arity" (or
// "F/Arity" for M = colony); the one registered as "M:F" (or "F") for any
// arity. Nothing else: the call raises error undef with the stack
// [{M, F, Args, []}], as apply/3 of a function that does not exist does on
// an Erlang node. The outcome is an rpcOutcome, the four ways an Erlang
// function ends (erpc:execute_call's return, throw, exit, error with a
// stack), which erpc (erpc.go) and rex (rex.go) turn into their replies.
//
// The BIFs are those that tools and health checks call: erlang:node/0,
// nodes/0,1, is_alive/0, whereis/1, registered/0, is_process_alive/1,
// processes/0, system_info/1 (a few keys), statistics/1 (a few keys),
// memory/0,1, apply/2,3, and halt/0,1,2, which is refused
// (docs/distribution.md, "rpc, rex and BIFs", says what each answers and
// why). A BIF given an argument it does not take raises badarg with the
// stack an Erlang node gives, [{erlang, F, Args, [{error_info, #{module =>
// erl_erts_errors}}]}], so that the caller's erl_erts_errors formats it.
//
// Funs. erpc:call(Node, Fun) is apply(Fun, []) on Node. A local fun names
// code by its module's md5 and index; Colony has no such code, and answers
// as an Erlang node answers a fun whose module it cannot load: error undef
// with the stack [{Fun, Args, []}, {erlang, apply, 2, []}]; or badarity
// when Args do not fit the fun's arity, which an Erlang node checks first.
// An external fun (fun M:F/A) is apply(M, F, Args).

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// OTPRelease is what erlang:system_info(otp_release) answers: the OTP
// release whose distribution protocol and observable behaviour Colony
// implements and is tested against (tools pick a protocol dialect by it).
const OTPRelease = "25"

var (
	atomErlang    = actor.Atom("erlang")
	atomExit      = actor.Atom("exit")
	atomApply     = actor.Atom("apply")
	atomBadfun    = actor.Atom("badfun")
	atomBadarity  = actor.Atom("badarity")
	atomUndefined = actor.Atom("undefined")
)

// rpcOutcome is how a call ended: class return (value), throw, exit or
// error (value: the reason; stack: the error's stack, innermost first).
type rpcOutcome struct {
	class actor.Atom
	value any
	stack []any
}

func returned(v any) rpcOutcome { return rpcOutcome{class: atomReturn, value: v} }

// raised is error:reason with stack.
func raised(reason any, stack ...any) rpcOutcome {
	if stack == nil {
		stack = []any{}
	}
	return rpcOutcome{class: atomError, value: reason, stack: stack}
}

// undef is the error of a call of a function nothing defines.
func undef(m, f actor.Atom, args []any) rpcOutcome {
	return raised(atomUndef, etf.Tuple{m, f, args, []any{}})
}

// errorInfo is the location list of a BIF's error frame on OTP 24 and
// later: it tells erl_error which module formats the error.
func errorInfo() []any {
	return []any{etf.Tuple{actor.Atom("error_info"), map[any]any{actor.Atom("module"): actor.Atom("erl_erts_errors")}}}
}

// badarg is the badarg of erlang:f(args...).
func badarg(f actor.Atom, args []any) rpcOutcome {
	return raised(atomBadarg, etf.Tuple{atomErlang, f, args, errorInfo()})
}

// bifFunc is a BIF as this node answers it.
type bifFunc func(n *Node, c *actor.Context, args []any) rpcOutcome

// maxBIFArity is the greatest arity of a BIF below.
const maxBIFArity = 3

// bifKey names a BIF: erlang:F/Arity.
type bifKey struct {
	f     actor.Atom
	arity int
}

// bif is the BIF erlang:f/arity, or nil.
func bif(f actor.Atom, arity int) bifFunc {
	switch (bifKey{f, arity}) {
	case bifKey{"node", 0}:
		return func(n *Node, _ *actor.Context, _ []any) rpcOutcome { return returned(n.name) }
	case bifKey{"nodes", 0}:
		return func(n *Node, _ *actor.Context, _ []any) rpcOutcome { return returned(atomList(n.Nodes())) }
	case bifKey{"nodes", 1}:
		return bifNodes
	case bifKey{"is_alive", 0}:
		return func(*Node, *actor.Context, []any) rpcOutcome { return returned(true) }
	case bifKey{"whereis", 1}:
		return bifWhereis
	case bifKey{"registered", 0}:
		return func(n *Node, _ *actor.Context, _ []any) rpcOutcome {
			names := n.sys.Registered()
			l := make([]any, len(names))
			for i, s := range names {
				l[i] = actor.Atom(s)
			}
			return returned(l)
		}
	case bifKey{"is_process_alive", 1}:
		return bifIsProcessAlive
	case bifKey{"processes", 0}:
		return bifProcesses
	case bifKey{"system_info", 1}:
		return bifSystemInfo
	case bifKey{"statistics", 1}:
		return bifStatistics
	case bifKey{"memory", 0}, bifKey{"memory", 1}:
		return bifMemory
	case bifKey{"halt", 0}, bifKey{"halt", 1}, bifKey{"halt", 2}:
		return bifHalt
	case bifKey{"apply", 2}:
		return bifApply2
	case bifKey{"apply", 3}:
		return bifApply3
	}
	return nil
}

// applyMFA runs M:F(Args...) as a peer's erpc or rpc asks it (see the
// file's note), in c, the actor serving the call.
func (n *Node) applyMFA(c *actor.Context, m, f actor.Atom, args []any) rpcOutcome {
	if m == atomErlang {
		if b := bif(f, len(args)); b != nil {
			return b(n, c, args)
		}
	}
	if fn := n.rpcFunc(m, f, len(args)); fn != nil {
		return n.runRPC(c, fn, args)
	}
	n.logf(levelInfo, "dist: rpc of %s:%s/%d, which is not registered (RegisterRPC)", m, f, len(args))
	return undef(m, f, args)
}

// runRPC runs a registered function: its value, or its error as error
// {Text, []}, a panic as {panic, Text}. A value with no term form is an
// error too, so that the caller learns of it.
func (n *Node) runRPC(c *actor.Context, fn RPCFunc, args []any) (out rpcOutcome) {
	defer func() {
		if p := recover(); p != nil {
			out = raised(errorText(panicError{p}))
		}
	}()
	v, err := fn(c, args)
	if err != nil {
		return raised(errorText(err))
	}
	if _, eerr := n.enc.Append(nil, v); eerr != nil {
		return raised("dist: result not sent: " + eerr.Error())
	}
	return returned(v)
}

func atomList(as []actor.Atom) []any {
	l := make([]any, len(as))
	for i, a := range as {
		l[i] = a
	}
	return l
}

// bifNodes is nodes(Arg): Arg one of visible, hidden, connected, this,
// known, or a list of them. The list is hidden nodes, then visible ones,
// then this node, as an Erlang node builds it. Known nodes are this one and
// the connected ones (an Erlang node also remembers nodes whose pids it
// still holds).
func bifNodes(n *Node, _ *actor.Context, args []any) rpcOutcome {
	kinds, ok := args[0].([]any)
	if !ok {
		kinds = []any{args[0]}
	}
	var visible, hidden, this bool
	for _, k := range kinds {
		switch k {
		case actor.Atom("visible"):
			visible = true
		case actor.Atom("hidden"):
			hidden = true
		case actor.Atom("connected"):
			visible, hidden = true, true
		case actor.Atom("this"):
			this = true
		case actor.Atom("known"):
			visible, hidden, this = true, true, true
		default:
			return badarg("nodes", args)
		}
	}
	l := []any{}
	if hidden {
		l = append(l, atomList(n.HiddenNodes())...)
	}
	if visible {
		l = append(l, atomList(n.Nodes())...)
	}
	if this {
		l = append(l, n.name)
	}
	return returned(l)
}

func bifWhereis(n *Node, _ *actor.Context, args []any) rpcOutcome {
	name, ok := args[0].(actor.Atom)
	if !ok {
		return badarg("whereis", args)
	}
	if pid, ok := n.sys.Whereis(string(name)); ok {
		return returned(pid)
	}
	return returned(atomUndefined)
}

// bifIsProcessAlive takes pids of this node only, as on an Erlang node: a
// pid of another node is badarg, one of an earlier incarnation of this
// node is dead.
func bifIsProcessAlive(n *Node, _ *actor.Context, args []any) rpcOutcome {
	pid, ok := args[0].(actor.Pid)
	if !ok {
		return badarg("is_process_alive", args)
	}
	if id, remote := pid.Remote(); remote {
		if id.Node == n.name {
			return returned(false)
		}
		return badarg("is_process_alive", args)
	}
	return returned(n.sys.Alive(pid))
}

func bifProcesses(n *Node, _ *actor.Context, _ []any) rpcOutcome {
	l := []any{}
	n.sys.Scan(0, 0, func(s actor.ActorStat) bool {
		l = append(l, s.Pid)
		return true
	})
	return returned(l)
}

// systemVersion is system_info(system_version): text for people, as the
// banner an Erlang node prints.
func systemVersion() string {
	return fmt.Sprintf("Colony on Go %s (Erlang distribution as OTP %s) [%s-%s] [%d-bit]\n",
		runtime.Version(), OTPRelease, runtime.GOOS, runtime.GOARCH, 32<<(^uint(0)>>63))
}

// bifSystemInfo answers the keys that mean something for a Go node; any
// other key is badarg, as an Erlang node answers a key it does not know.
func bifSystemInfo(n *Node, _ *actor.Context, args []any) rpcOutcome {
	k, _ := args[0].(actor.Atom)
	switch k {
	case "otp_release":
		return returned(charlist(OTPRelease))
	case "system_version":
		return returned(charlist(systemVersion()))
	case "process_count":
		return returned(n.sys.Stats().Live)
	case "schedulers", "schedulers_online":
		return returned(len(n.sys.Stats().Schedulers))
	case "logical_processors", "logical_processors_available", "logical_processors_online":
		return returned(runtime.NumCPU())
	case "wordsize":
		return returned((32 << (^uint(0) >> 63)) / 8)
	case "machine":
		return returned(charlist("Colony"))
	}
	return badarg("system_info", args)
}

// charlist is s as an Erlang string, a list of its characters.
func charlist(s string) []any {
	l := make([]any, 0, len(s))
	for _, r := range s {
		l = append(l, int(r))
	}
	return l
}

// bifStatistics answers runtime and wall_clock ({Total, SinceLastCall} in
// milliseconds; the last call is the node's, whoever made it, as on an
// Erlang node), run_queue and total_run_queue_lengths (actors waiting to
// run); any other key is badarg.
func bifStatistics(n *Node, _ *actor.Context, args []any) rpcOutcome {
	k, _ := args[0].(actor.Atom)
	switch k {
	case "runtime", "wall_clock":
		var now time.Duration
		last := &n.bifStats.lastWall
		if k == "runtime" {
			now, last = cpuTime(), &n.bifStats.lastCPU
		} else {
			now = time.Since(n.bifStats.start)
		}
		n.bifStats.mu.Lock()
		since := now - *last
		*last = now
		n.bifStats.mu.Unlock()
		return returned(etf.Tuple{int(now.Milliseconds()), int(since.Milliseconds())})
	case "run_queue", "total_run_queue_lengths":
		st := n.sys.Stats()
		q := st.GlobalQueue
		for _, s := range st.Schedulers {
			q += s.Queued
		}
		return returned(q)
	}
	return badarg("statistics", args)
}

// bifStats is what statistics(runtime) and statistics(wall_clock) keep
// for their "since the last call".
type bifStats struct {
	start time.Time // the node's start; immutable after Start

	mu                sync.Mutex // guards lastCPU and lastWall
	lastCPU, lastWall time.Duration
}

// memoryKeys are memory/0's keys, in OTP's order.
var memoryKeys = []actor.Atom{"total", "processes", "processes_used", "system", "atom", "atom_used", "binary", "code", "ets"}

// bifMemory is memory/0 and memory/1 from the Go runtime's figures: total
// is the memory the runtime holds from the system less what it released;
// processes (and processes_used) the heap in use and the goroutine stacks,
// where the actors and their messages live; system the rest (total -
// processes). atom, binary, code and ets are 0: a Go node has no atom
// table of its own size, no binary heap apart from the Go heap, no loaded
// code and no ETS.
func bifMemory(n *Node, _ *actor.Context, args []any) rpcOutcome {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	total := int(ms.Sys - ms.HeapReleased)
	procs := int(ms.HeapAlloc + ms.StackInuse)
	val := map[actor.Atom]int{"total": total, "processes": procs, "processes_used": procs, "system": total - procs}
	if len(args) == 0 {
		l := make([]any, len(memoryKeys))
		for i, k := range memoryKeys {
			l[i] = etf.Tuple{k, val[k]}
		}
		return returned(l)
	}
	if k, ok := args[0].(actor.Atom); ok && slices.Contains(memoryKeys, k) {
		return returned(val[k])
	}
	ks, ok := args[0].([]any)
	if !ok {
		return badarg("memory", args)
	}
	l := make([]any, len(ks))
	for i, k := range ks {
		a, ok := k.(actor.Atom)
		if !ok || !slices.Contains(memoryKeys, a) {
			return badarg("memory", args)
		}
		l[i] = etf.Tuple{a, val[a]}
	}
	return returned(l)
}

// bifHalt refuses: the Go program owns its process's life. notsup is the
// error OTP raises for an operation a system does not support; arguments
// that halt does not take are badarg first, as on an Erlang node.
func bifHalt(n *Node, _ *actor.Context, args []any) rpcOutcome {
	if len(args) > 0 {
		switch st := args[0].(type) {
		case int:
			if st < 0 {
				return badarg("halt", args)
			}
		case []any: // a string: the slogan of a crash dump
		case actor.Atom:
			if st != "abort" {
				return badarg("halt", args)
			}
		default:
			return badarg("halt", args)
		}
	}
	if len(args) == 2 {
		if _, ok := args[1].([]any); !ok {
			return badarg("halt", args)
		}
	}
	n.logf(levelWarn, "dist: a peer asked this node to halt (erlang:halt/%d): refused", len(args))
	return raised(atomNotsup, etf.Tuple{atomErlang, actor.Atom("halt"), args, []any{}})
}

// bifApply2 is apply(Fun, Args). Its frame {erlang, apply, 2, []} follows
// the applied function's on an error's stack, as on an Erlang node.
func bifApply2(n *Node, c *actor.Context, args []any) rpcOutcome {
	frame := etf.Tuple{atomErlang, atomApply, 2, []any{}}
	as, ok := args[1].([]any)
	if !ok {
		return badarg(atomApply, args)
	}
	switch fn := args[0].(type) {
	case etf.Fun:
		if len(fn.Raw) > 5 && int(fn.Raw[5]) != len(as) { // NEW_FUN_EXT: tag, Size(4), Arity
			return raised(etf.Tuple{atomBadarity, etf.Tuple{fn, as}}, frame)
		}
		n.logf(levelInfo, "dist: rpc of a fun: no Erlang code runs on this node (undef)")
		return raised(atomUndef, etf.Tuple{fn, as, []any{}}, frame)
	case etf.Export:
		if int(fn.Arity) != len(as) {
			return raised(etf.Tuple{atomBadarity, etf.Tuple{fn, as}}, frame)
		}
		return withFrame(n.applyMFA(c, fn.Module, fn.Function, as), frame)
	}
	return raised(etf.Tuple{atomBadfun, args[0]}, frame)
}

// bifApply3 is apply(M, F, Args).
func bifApply3(n *Node, c *actor.Context, args []any) rpcOutcome {
	m, ok1 := args[0].(actor.Atom)
	f, ok2 := args[1].(actor.Atom)
	as, ok3 := args[2].([]any)
	if !ok1 || !ok2 || !ok3 {
		return badarg(atomApply, args)
	}
	return withFrame(n.applyMFA(c, m, f, as), etf.Tuple{atomErlang, atomApply, 3, []any{}})
}

// withFrame appends a caller's frame to an error's stack.
func withFrame(o rpcOutcome, frame etf.Tuple) rpcOutcome {
	if o.class == atomError {
		o.stack = append(slices.Clip(o.stack), frame)
	}
	return o
}
