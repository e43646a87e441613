package supervisor

import (
	"errors"
	"slices"
	"sort"

	"github.com/colonyrt/colony/actor"
)

// The child-management calls. Each is a gen_server call to the supervisor
// (timeout Infinity, as OTP's); c is the System from outside or the
// calling actor's Context. Errors besides the ones listed: actor.ErrNoProc
// if the supervisor is dead.

type (
	startChildReq     struct{ spec ChildSpec }
	startChildArgsReq struct{ args []any }
	terminateChildReq struct{ id string }
	terminatePidReq   struct{ pid actor.Pid }
	restartChildReq   struct{ id string }
	deleteChildReq    struct{ id string }
	whichChildrenReq  struct{}
	countChildrenReq  struct{}
)

// StartChild adds a child spec to a supervisor (not SimpleOneForOne) and
// starts it. It returns the child's pid, or the zero Pid if the child's
// start ignored it (the spec is kept, unless Temporary). Errors:
// *AlreadyStartedError, ErrAlreadyPresent, *ChildStartError,
// StartSpecError, ErrSimpleOneForOne.
func StartChild(c actor.Caller, sup actor.Pid, spec ChildSpec) (actor.Pid, error) {
	return actor.Call[actor.Pid](c, sup, startChildReq{spec}, actor.Infinity)
}

// StartChildArgs starts a dynamic child of a SimpleOneForOne supervisor:
// the template's Start with args. Errors: *ChildStartError, ErrNotSimple.
func StartChildArgs(c actor.Caller, sup actor.Pid, args ...any) (actor.Pid, error) {
	return actor.Call[actor.Pid](c, sup, startChildArgsReq{args}, actor.Infinity)
}

// TerminateChild stops the child id by its shutdown protocol; its spec is
// kept (unless Temporary) for RestartChild. Errors: ErrNotFound,
// ErrSimpleOneForOne.
func TerminateChild(c actor.Caller, sup actor.Pid, id string) error {
	_, err := c.Call(sup, terminateChildReq{id}, actor.Infinity)
	return err
}

// TerminateChildPid stops a dynamic child of a SimpleOneForOne supervisor.
// As in OTP 25, a pid that is no longer alive is not an error; a live pid
// that is not its child is ErrNotFound; a malformed pid (the zero Pid,
// another System's) is actor.ErrBadPid. Errors: ErrNotFound for any other
// strategy.
func TerminateChildPid(c actor.Caller, sup actor.Pid, pid actor.Pid) error {
	_, err := c.Call(sup, terminatePidReq{pid}, actor.Infinity)
	return err
}

// RestartChild starts again a child that was terminated. Errors:
// ErrRunning, ErrRestarting, ErrNotFound, *ChildStartError,
// ErrSimpleOneForOne.
func RestartChild(c actor.Caller, sup actor.Pid, id string) (actor.Pid, error) {
	return actor.Call[actor.Pid](c, sup, restartChildReq{id}, actor.Infinity)
}

// DeleteChild removes the spec of a child that is not running. Errors:
// ErrRunning, ErrRestarting, ErrNotFound, ErrSimpleOneForOne.
func DeleteChild(c actor.Caller, sup actor.Pid, id string) error {
	_, err := c.Call(sup, deleteChildReq{id}, actor.Infinity)
	return err
}

// WhichChildren lists the children: static ones in start order, dynamic
// ones in the order they were started.
func WhichChildren(c actor.Caller, sup actor.Pid) ([]ChildInfo, error) {
	return actor.Call[[]ChildInfo](c, sup, whichChildrenReq{}, actor.Infinity)
}

// CountChildren counts the children.
func CountChildren(c actor.Caller, sup actor.Pid) (Counts, error) {
	return actor.Call[Counts](c, sup, countChildrenReq{}, actor.Infinity)
}

func (s *sup) find(id string) *child {
	for _, k := range s.kids {
		if k.spec.ID == id {
			return k
		}
	}
	return nil
}

// HandleCall serves the child-management calls.
func (s *sup) HandleCall(c *actor.Context, req actor.Request) {
	simple := s.spec.Strategy == SimpleOneForOne
	fail := func(err error) { c.ReplyError(req, err) }
	switch m := req.Msg.(type) {
	case startChildReq:
		if simple {
			fail(ErrSimpleOneForOne)
			return
		}
		if err := checkChild(m.spec, s.spec.AutoShutdown); err != nil {
			fail(err)
			return
		}
		if k := s.find(m.spec.ID); k != nil {
			if !k.pid.IsZero() {
				fail(&AlreadyStartedError{k.pid})
			} else {
				fail(ErrAlreadyPresent)
			}
			return
		}
		ch := &child{spec: m.spec}
		if reason, ok := s.startChild(c, ch); !ok {
			fail(&ChildStartError{ID: m.spec.ID, Reason: reason})
			return
		}
		if !ch.pid.IsZero() || ch.spec.Restart != Temporary {
			s.kids = append(s.kids, ch)
		}
		c.Reply(req, ch.pid)
	case startChildArgsReq:
		if !simple {
			fail(ErrNotSimple)
			return
		}
		s.seq++
		ch := &child{spec: s.spec.Children[0], args: m.args, seq: s.seq}
		if reason, ok := s.startChild(c, ch); !ok {
			fail(&ChildStartError{ID: ch.spec.ID, Reason: reason})
			return
		}
		if !ch.pid.IsZero() {
			ch.key = ch.pid
			s.dyn[ch.key] = ch
		}
		c.Reply(req, ch.pid)
	case terminateChildReq:
		if simple {
			fail(ErrSimpleOneForOne)
			return
		}
		k := s.find(m.id)
		if k == nil {
			fail(ErrNotFound)
			return
		}
		if !k.pid.IsZero() {
			s.stopChild(c, k)
		}
		k.restarting = false
		delete(s.retry, k)
		if k.spec.Restart == Temporary {
			s.kids = slices.DeleteFunc(s.kids, func(x *child) bool { return x == k })
		}
		c.Reply(req, nil)
	case terminatePidReq:
		k := s.dyn[m.pid]
		if !simple {
			fail(ErrNotFound)
			return
		}
		if _, err := c.System().Info(m.pid); errors.Is(err, actor.ErrBadPid) && !m.pid.IsRemote() {
			fail(actor.ErrBadPid) // not "not alive", which would answer ok
			return
		}
		if k == nil {
			if m.pid.IsRemote() || c.System().Alive(m.pid) {
				fail(ErrNotFound) // alive but not our child: OTP 25's {error, not_found}
				return
			}
			c.Reply(req, nil) // already gone: OTP answers ok
			return
		}
		delete(s.dyn, m.pid)
		if k.restarting { // no process: cancel the pending restart
			k.restarting = false
			delete(s.retry, k)
		} else {
			s.stopChild(c, k)
		}
		c.Reply(req, nil)
	case restartChildReq:
		k, err := s.stopped(simple, m.id)
		if err != nil {
			fail(err)
			return
		}
		delete(s.retry, k)
		if reason, ok := s.startChild(c, k); !ok {
			fail(&ChildStartError{ID: k.spec.ID, Reason: reason})
			return
		}
		c.Reply(req, k.pid)
	case deleteChildReq:
		k, err := s.stopped(simple, m.id)
		if err != nil {
			fail(err)
			return
		}
		s.kids = slices.DeleteFunc(s.kids, func(x *child) bool { return x == k })
		c.Reply(req, nil)
	case whichChildrenReq:
		c.Reply(req, s.which())
	case countChildrenReq:
		c.Reply(req, s.count(c.System().Alive))
	default:
		fail(actor.ErrUnhandled)
	}
}

// stopped finds the static child id that restart_child and delete_child
// act on: it must exist and be neither running nor waiting for a retried
// restart (OTP answers simple_one_for_one, not_found, running, restarting).
func (s *sup) stopped(simple bool, id string) (*child, error) {
	if simple {
		return nil, ErrSimpleOneForOne
	}
	k := s.find(id)
	switch {
	case k == nil:
		return nil, ErrNotFound
	case !k.pid.IsZero():
		return nil, ErrRunning
	case k.restarting:
		return nil, ErrRestarting
	}
	return k, nil
}

func (s *sup) which() []ChildInfo {
	var out []ChildInfo
	if s.spec.Strategy == SimpleOneForOne {
		ks := make([]*child, 0, len(s.dyn))
		for _, k := range s.dyn {
			ks = append(ks, k)
		}
		sort.Slice(ks, func(i, j int) bool { return ks[i].seq < ks[j].seq })
		for _, k := range ks {
			out = append(out, ChildInfo{ID: k.spec.ID, Pid: k.pid, Restarting: k.restarting, Type: k.spec.Type})
		}
		return out
	}
	for _, k := range s.kids {
		out = append(out, ChildInfo{ID: k.spec.ID, Pid: k.pid, Restarting: k.restarting, Type: k.spec.Type})
	}
	return out
}

// count is count_children. A static child counts as active only if its
// process is alive (OTP 25's count_child: is_pid(Pid) andalso
// is_process_alive(Pid)): a child that died but whose Exit the supervisor
// has not handled yet still has its pid, and is not active. Dynamic
// children are counted as OTP counts them, without the check.
func (s *sup) count(alive func(actor.Pid) bool) Counts {
	var n Counts
	if s.spec.Strategy == SimpleOneForOne {
		n.Specs = 1
		for _, k := range s.dyn {
			if !k.restarting {
				n.Active++
			}
		}
		if s.spec.Children[0].Type == Supervisor {
			n.Supervisors = len(s.dyn)
		} else {
			n.Workers = len(s.dyn)
		}
		return n
	}
	n.Specs = len(s.kids)
	for _, k := range s.kids {
		if !k.pid.IsZero() && (k.pid.IsRemote() || alive(k.pid)) { // a remote pid: is_pid only
			n.Active++
		}
		if k.spec.Type == Supervisor {
			n.Supervisors++
		} else {
			n.Workers++
		}
	}
	return n
}
