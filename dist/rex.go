package dist

// rex: the node's rpc server.
//
// Design note.
//
// Problem. Every Erlang node runs rex, rpc's gen_server, registered as rex.
// OTP 25 sends rpc:call, cast, multicall and async_call over erpc (a spawn
// request: erpc.go), but rpc:block_call, rpc:sbcast, old nodes' rpc (OTP 22
// and earlier), C nodes and every OTP 23+ node's nodes observer still send
// to rex, and without rex those get noproc or wait forever. What reaches
// rex, and what rex answers (OTP 25's rpc.erl):
//
//	'$gen_call' {call, M, F, A, GL}         spawn, run, gen:reply the result
//	'$gen_call' {block_call, M, F, A, GL}   run, rex serving nothing else meanwhile; reply
//	'$gen_cast' {cast, M, F, A, GL}         spawn, run, no answer
//	{From, {call, M, F, A, GL}}             as call, answered From ! {rex, Result}
//	{From, {sbcast, Name, Msg}}             Name ! Msg; From ! {rex, node(), node()},
//	                                        or {rex, node(), {nonexisting_name, Name}}
//	{From, {send, Name, Msg}}               Name ! {From, Msg}; nonexisting_name as above
//	{From, features_request}                From ! {features_reply, node(), [erpc]}
//	anything else (stop included)           ignored: no answer
//
// The result of a call is rpc's: the value (also a thrown one), {badrpc,
// {'EXIT', R}} for an exit R, {badrpc, {'EXIT', {R, Stack}}} for an error;
// M:F(A) is what applyMFA (bif.go) runs for erpc. GL, the group leader,
// is ignored: a Go actor does no Erlang IO.
//
// Protocol. As rpc.erl: a call runs in an actor of its own, monitored by
// rex, which keeps the caller by the monitor. The worker ends with the
// call's result as its exit reason and rex answers from the Down, so rex
// alone replies, once: a worker that dies before it had a result (killed)
// gets the caller {badrpc, {'EXIT', Reason}}, as from OTP's rex. A block_call
// also runs in a worker (the function gets a Context of its own, not
// rex's), and rex waits for the worker's Down in a selective receive, so
// that nothing else rex is sent is served meanwhile, as OTP's rex runs it
// in its own process. rex monitors net_kernel, which holds the node, and
// ends with it.

import (
	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

var (
	atomRex             = actor.Atom("rex")
	atomCall            = actor.Atom("call")
	atomBlockCall       = actor.Atom("block_call")
	atomCast            = actor.Atom("cast")
	atomSbcast          = actor.Atom("sbcast")
	atomSend            = actor.Atom("send")
	atomFeaturesRequest = actor.Atom("features_request")
	atomFeaturesReply   = actor.Atom("features_reply")
	atomNonexistingName = actor.Atom("nonexisting_name")
	atomBadrpc          = actor.Atom("badrpc")
	atomEXIT            = actor.Atom("EXIT")
)

// rpcResult is an outcome as rpc's caller gets it (rpc.erl's
// execute_call).
func rpcResult(o rpcOutcome) any {
	switch o.class {
	case atomExit:
		return etf.Tuple{atomBadrpc, etf.Tuple{atomEXIT, o.value}}
	case atomError:
		return etf.Tuple{atomBadrpc, etf.Tuple{atomEXIT, etf.Tuple{o.value, o.stack}}}
	}
	return o.value // return, throw
}

// rexServer is the rex actor.
type rexServer struct {
	n      *Node
	kernel actor.Ref               // rex's monitor of net_kernel
	calls  map[actor.Ref]*rexReply // the running calls, by their worker's monitor
}

// rexReply is where a call's result goes: a gen_server caller (req), or a
// C node's From ({rex, Result}); none for a cast.
type rexReply struct {
	req  actor.Request
	from actor.Pid // with req unset
	cast bool
}

func (r *rexReply) send(c *actor.Context, v any) {
	switch {
	case r.cast:
	case r.from.IsZero():
		c.Reply(r.req, v)
	default:
		c.Send(r.from, etf.Tuple{atomRex, v})
	}
}

// rexDone is the exit reason of a worker that ran its call to the end:
// the call's result, for rex to send (a pointer: reasons are compared).
type rexDone struct{ result any }

func (s *rexServer) Init(c *actor.Context) {
	s.calls = make(map[actor.Ref]*rexReply)
	ref, err := c.Monitor(s.n.kernel)
	if err != nil {
		c.Stop(actor.Normal) // the node is stopping already
		return
	}
	s.kernel = ref
}

func (s *rexServer) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Down:
		s.down(c, m)
		return
	case actor.Request:
		t, ok := m.Msg.(etf.Tuple)
		if !ok || len(t) != 5 || (t[0] != atomCall && t[0] != atomBlockCall) {
			return // not rpc's: ignored, as rex does
		}
		r := &rexReply{req: m}
		if t[0] == atomCall {
			s.start(c, t, r)
		} else {
			s.block(c, t, r)
		}
		return
	}
	if cm, ok := actor.CastMsg(msg); ok {
		if t, ok := cm.(etf.Tuple); ok && len(t) == 5 && t[0] == atomCast {
			s.start(c, t, &rexReply{cast: true})
		}
		return
	}
	t, ok := msg.(etf.Tuple)
	if !ok || len(t) != 2 {
		return
	}
	from, ok := t[0].(actor.Pid)
	if !ok {
		return
	}
	if t[1] == atomFeaturesRequest {
		c.Send(from, etf.Tuple{atomFeaturesReply, s.n.name, []any{atomErpc}})
		return
	}
	req, ok := t[1].(etf.Tuple)
	switch {
	case !ok:
	case len(req) == 5 && req[0] == atomCall:
		s.start(c, req, &rexReply{from: from})
	case len(req) == 3 && req[0] == atomSbcast:
		if s.sendTo(c, req[1], req[2]) {
			c.Send(from, etf.Tuple{atomRex, s.n.name, s.n.name})
		} else {
			c.Send(from, etf.Tuple{atomRex, s.n.name, etf.Tuple{atomNonexistingName, req[1]}})
		}
	case len(req) == 3 && req[0] == atomSend:
		if !s.sendTo(c, req[1], etf.Tuple{from, req[2]}) {
			c.Send(from, etf.Tuple{atomRex, s.n.name, etf.Tuple{atomNonexistingName, req[1]}})
		}
	}
}

// sendTo is Name ! Msg for a registered name or a pid: false where Erlang's
// send raises badarg (a name nobody holds, or not a name).
func (s *rexServer) sendTo(c *actor.Context, name, msg any) bool {
	switch to := name.(type) {
	case actor.Atom:
		return c.SendName(string(to), msg) == nil
	case actor.Pid:
		c.Send(to, msg) // to a dead pid: dropped, as in Erlang
		return true
	}
	return false
}

// worker spawns, monitored, the actor that runs a call {Tag, M, F, A, GL}
// and answers r; ok is false when there is none (the arguments are not an
// {M, F, A}, answered badarg as apply/3 raises it, or the slab is full).
func (s *rexServer) worker(c *actor.Context, t etf.Tuple, r *rexReply) (actor.Ref, bool) {
	m, ok1 := t[1].(actor.Atom)
	f, ok2 := t[2].(actor.Atom)
	args, ok3 := t[3].([]any)
	if !ok1 || !ok2 || !ok3 {
		r.send(c, rpcResult(badarg(atomApply, []any{t[1], t[2], t[3]})))
		return 0, false
	}
	_, ref, err := c.SpawnMonitor(&rexWorker{n: s.n, m: m, f: f, args: args, cast: r.cast})
	if err != nil {
		s.n.logf(levelWarn, "dist: rex: spawn of a worker for %s:%s/%d: %v", m, f, len(args), err)
		r.send(c, etf.Tuple{atomBadrpc, etf.Tuple{atomEXIT, atomSystemLimit}})
		return 0, false
	}
	return ref, true
}

// start runs a call or cast in a worker and goes on serving.
func (s *rexServer) start(c *actor.Context, t etf.Tuple, r *rexReply) {
	if ref, ok := s.worker(c, t, r); ok {
		s.calls[ref] = r
	}
}

// block runs a block_call in a worker and serves nothing else until the
// worker has ended (see the design note).
func (s *rexServer) block(c *actor.Context, t etf.Tuple, r *rexReply) {
	ref, ok := s.worker(c, t, r)
	if !ok {
		return
	}
	s.calls[ref] = r
	m, err := c.Receive(func(msg any) bool {
		d, ok := msg.(actor.Down)
		return ok && (d.Ref == ref || d.Ref == s.kernel)
	}, actor.Infinity)
	if err == nil {
		s.down(c, m.(actor.Down))
	}
}

// down is a worker's end, whose reason is the call's result (a
// *rexDone), or the reason it died before it had one (killed), answered
// {badrpc, {'EXIT', Reason}}; or net_kernel's, with which rex ends.
func (s *rexServer) down(c *actor.Context, d actor.Down) {
	if d.Ref == s.kernel {
		c.Stop(actor.Normal)
		return
	}
	r, ok := s.calls[d.Ref]
	if !ok {
		return
	}
	delete(s.calls, d.Ref)
	switch reason := d.Reason.(type) {
	case *rexDone:
		r.send(c, reason.result)
	default:
		if !r.cast || !actor.IsNormal(reason) {
			r.send(c, etf.Tuple{atomBadrpc, etf.Tuple{atomEXIT, s.n.wireReason(reason)}})
		}
	}
}

// rexWorker runs one call of rex in its Init and ends with its result.
type rexWorker struct {
	n    *Node
	m, f actor.Atom
	args []any
	cast bool
}

func (w *rexWorker) Init(c *actor.Context) {
	o := w.n.applyMFA(c, w.m, w.f, w.args)
	if w.cast {
		if o.class != atomReturn {
			w.n.logf(levelInfo, "dist: rpc cast of %s:%s/%d ended with %s: %v", w.m, w.f, len(w.args), o.class, o.value)
		}
		c.Stop(actor.Normal)
		return
	}
	c.Stop(&rexDone{rpcResult(o)})
}

func (w *rexWorker) Receive(*actor.Context, any) {}
