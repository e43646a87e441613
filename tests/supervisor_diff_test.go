package tests

// The Go side of the supervisor scenarios in testdata/erlang/supervisor:
// each test runs the escript live (erldiff.Run), runs the same scenario on
// Colony, and compares the traces. The Go worker below mirrors the
// escript's worker callbacks (testdata/erlang/colony_sup.hrl) event for
// event; the scenario runs inside a trapping "main" actor, as the escript
// runs in a trapping main process.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// tup prints as an Erlang tuple.
type tup []any

// undefined prints as the atom undefined.
type undef struct{}

var undefined = undef{}

// tracer collects trace lines and the symbolic names of pids and refs.
type tracer struct {
	mu     sync.Mutex
	lines  []string
	names  map[actor.Pid]string
	latest map[string]actor.Pid
	refs   map[actor.Ref]string
	nref   int
	// timers names the timer refs of the timer scenarios (t1, t2, ...),
	// for the Timeout messages of StartTimer.
	timers map[actor.TimerRef]string
	main   actor.Pid
	// switches: what the next Init of a worker with init "switch" does
	// (colony_sup.hrl's switch/2), by id.
	switches map[string]wopts
}

func newTracer() *tracer {
	return &tracer{names: map[actor.Pid]string{}, latest: map[string]actor.Pid{}, refs: map[actor.Ref]string{}, timers: map[actor.TimerRef]string{}}
}

func (t *tracer) name(pid actor.Pid, n string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.names[pid] = n
	t.latest[n] = pid
}

// nameTimer names a timer ref, for the Timeout messages that carry it.
func (t *tracer) nameTimer(ref actor.TimerRef, n string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timers[ref] = n
}

func (t *tracer) pid(n string) actor.Pid {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.latest[n]
}

// setSwitch sets what the next Init of worker id (init "switch") does: o's
// init and stopReason.
func (t *tracer) setSwitch(id string, o wopts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.switches == nil {
		t.switches = map[string]wopts{}
	}
	t.switches[id] = o
}

func (t *tracer) switched(id string) wopts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.switches[id]
}

func (t *tracer) ev(words ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = t.fmtLocked(w)
	}
	t.lines = append(t.lines, strings.Join(parts, " "))
}

func (t *tracer) fmtLocked(w any) string {
	switch v := w.(type) {
	case actor.Pid:
		if v.IsZero() {
			return "undefined"
		}
		if n, ok := t.names[v]; ok {
			return n
		}
		return "unnamed_pid"
	case actor.Ref:
		if n, ok := t.refs[v]; ok {
			return n
		}
		return "unnamed_ref"
	case actor.TimerRef:
		if n, ok := t.timers[v]; ok && v != (actor.TimerRef{}) {
			return n
		}
		return "unnamed_ref"
	case actor.Timeout:
		// start_timer's {timeout, TimerRef, Msg}
		return t.fmtLocked(tup{"timeout", v.Ref, v.Msg})
	case actor.Atom:
		return string(v)
	case string:
		return v
	case bool:
		return fmt.Sprint(v)
	case int:
		return fmt.Sprint(v)
	case undef:
		return "undefined"
	case actor.ShutdownWith:
		return "{shutdown," + t.fmtLocked(v.Reason) + "}"
	case supervisor.FailedToStartChild:
		return t.fmtLocked(tup{"failed_to_start_child", v.ID, v.Reason})
	case supervisor.StartSpecError:
		return "start_spec"
	case tup:
		return "{" + t.join(v) + "}"
	case []any:
		return "[" + t.join(v) + "]"
	case error:
		return t.fmtErr(v)
	}
	return fmt.Sprintf("unformattable(%T)", w)
}

func (t *tracer) join(v []any) string {
	p := make([]string, len(v))
	for i, e := range v {
		p[i] = t.fmtLocked(e)
	}
	return strings.Join(p, ",")
}

// fmtErr prints a supervisor call's error as OTP's {error, ...} result.
func (t *tracer) fmtErr(err error) string {
	var as *supervisor.AlreadyStartedError
	switch {
	case err == supervisor.ErrNotFound:
		return "{error,not_found}"
	case err == supervisor.ErrRunning:
		return "{error,running}"
	case err == supervisor.ErrRestarting:
		return "{error,restarting}"
	case err == supervisor.ErrAlreadyPresent:
		return "{error,already_present}"
	case err == supervisor.ErrSimpleOneForOne:
		return "{error,simple_one_for_one}"
	case errorsAs(err, &as):
		return "{error,{already_started," + t.fmtLocked(as.Pid) + "}}"
	}
	if se, ok := err.(*actor.StartError); ok {
		return "{error," + t.fmtLocked(se.Reason) + "}"
	}
	if ce, ok := err.(*supervisor.ChildStartError); ok {
		// restart_child's form; start_child's error also holds the spec
		// ({error, {Reason, Spec}}), which its scenarios print apart.
		return "{error," + t.fmtLocked(ce.Reason) + "}"
	}
	return "unformattable_error(" + err.Error() + ")"
}

func errorsAs(err error, as **supervisor.AlreadyStartedError) bool {
	e, ok := err.(*supervisor.AlreadyStartedError)
	if ok {
		*as = e
	}
	return ok
}

// okResult prints a start result as {ok,W}, {ok,undefined} or the error.
func okResult(pid actor.Pid, err error) any {
	if err != nil {
		return err
	}
	return tup{"ok", pid}
}

func okOrErr(err error) any {
	if err != nil {
		return err
	}
	return "ok"
}

// Worker messages (colony_sup.hrl).
type (
	started  struct{ id string }
	stalling struct{ id string }
	stopMsg  struct{ r actor.Reason }
	release  struct{}
)

type wopts struct {
	init          string // "", "ignore", "stop", "switch" (tracer.setSwitch)
	stopReason    actor.Reason
	quiet         bool
	quietShutdown bool
	stall         string // "", "forever", "release"
	links         bool   // Terminate prints the links the worker still holds
}

// worker mirrors the escript's gen_server worker.
type worker struct {
	actor.ServerBase
	t    *tracer
	id   string
	opts wopts
}

func (w *worker) Init(c *actor.Context) error {
	c.TrapExit(true)
	w.t.name(c.Self(), w.id)
	init := w.opts
	if init.init == "switch" {
		init = w.t.switched(w.id)
	}
	switch init.init {
	case "ignore":
		return actor.ErrIgnore
	case "stop":
		return actor.Stop(init.stopReason)
	}
	if !w.opts.quiet {
		w.t.ev("start", w.id)
		c.Send(w.t.main, started{w.id})
	}
	return nil
}

func (w *worker) HandleCall(c *actor.Context, req actor.Request) { c.Reply(req, actor.Atom("pong")) }

func (w *worker) HandleCast(c *actor.Context, msg any) {
	if m, ok := msg.(stopMsg); ok {
		c.Stop(m.r)
	}
}

func (w *worker) HandleInfo(c *actor.Context, msg any) {
	if m, ok := msg.(actor.Exit); ok {
		c.Stop(m.Reason)
	}
}

func (w *worker) Terminate(c *actor.Context, r actor.Reason) {
	quiet := w.opts.quiet || (r == actor.Reason(actor.Shutdown) && w.opts.quietShutdown)
	if !quiet {
		w.t.ev("stop", w.id, r)
	}
	if w.opts.links {
		info, _ := c.Info()
		w.t.ev("links", w.id, info.Links)
	}
	switch w.opts.stall {
	case "forever":
		w.t.ev("stalling", w.id)
		c.Send(w.t.main, stalling{w.id})
		c.Receive(func(any) bool { return false }, actor.Infinity)
	case "release":
		w.t.ev("stalling", w.id)
		c.Send(w.t.main, stalling{w.id})
		c.Receive(func(m any) bool { _, ok := m.(release); return ok }, actor.Infinity)
		w.t.ev("released", w.id)
	}
}

// scen is a running scenario: the tracer and main's Context.
type scen struct{ mainProc }

func (s *scen) worker(id string, restart supervisor.Restart, o wopts) supervisor.ChildSpec {
	t := s.tracer
	return supervisor.ChildSpec{ID: id, Restart: restart,
		Start: supervisor.ServerStart(func(...any) actor.Server { return &worker{t: t, id: id, opts: o} })}
}

func (s *scen) w(id string) supervisor.ChildSpec { return s.worker(id, supervisor.Permanent, wopts{}) }

func (s *scen) subsup(id string, spec supervisor.Spec, kids ...supervisor.ChildSpec) supervisor.ChildSpec {
	spec.Children = kids
	cs := supervisor.Child(id, spec)
	start := cs.Start
	t := s.tracer
	cs.Start = func(c *actor.Context, args ...any) (actor.Pid, error) {
		pid, err := start(c, args...)
		if err == nil {
			t.name(pid, id)
		}
		return pid, err
	}
	return cs
}

func flags(st supervisor.Strategy, intensity int) supervisor.Spec {
	return supervisor.Spec{Strategy: st, Intensity: intensity, Period: time.Hour}
}

func (s *scen) startSup(name string, spec supervisor.Spec, kids ...supervisor.ChildSpec) actor.Pid {
	spec.Children = kids
	pid, err := supervisor.StartLink(s.c, spec)
	if err != nil {
		s.ev("start_link", name, err)
		return actor.Pid{}
	}
	s.name(pid, name)
	s.ev("start_link", name, "ok")
	return pid
}

func (s *scen) stopSup(sup actor.Pid) {
	m := s.mon(sup)
	s.c.Exit(sup, actor.Shutdown)
	s.awaitDown(m)
	s.awaitExit(sup)
}

func (s *scen) crash(id string, r actor.Reason) { actor.Cast(s.c, s.pid(id), stopMsg{r}) }

func (s *scen) awaitStart(ids ...string) {
	for _, id := range ids {
		s.c.Receive(func(m any) bool { st, ok := m.(started); return ok && st.id == id }, actor.Infinity)
	}
}

func (s *scen) awaitStalling(id string) {
	s.c.Receive(func(m any) bool { st, ok := m.(stalling); return ok && st.id == id }, actor.Infinity)
}

func (s *scen) childTuples(sup actor.Pid) []tup {
	cs, err := supervisor.WhichChildren(s.c, sup)
	if err != nil {
		panic(err)
	}
	var out []tup
	for _, ch := range cs {
		var id any = ch.ID
		if id == "" || id == "dyn" {
			id = undefined
		}
		var p any = ch.Pid
		if ch.Restarting {
			p = "restarting"
		}
		mod := "worker"
		if ch.Type == supervisor.Supervisor {
			mod = "sup"
		}
		out = append(out, tup{id, p, ch.Type.String(), []any{mod}})
	}
	return out
}

// children prints which_children sorted by id, then child name.
func (s *scen) children(sup actor.Pid) {
	ts := s.childTuples(sup)
	s.mu.Lock()
	sort.Slice(ts, func(i, j int) bool {
		a, b := s.fmtLocked(ts[i]), s.fmtLocked(ts[j])
		return a < b
	})
	s.mu.Unlock()
	l := make([]any, len(ts))
	for i := range ts {
		l[i] = ts[i]
	}
	s.ev("which_children", sup, l)
}

// childrenRaw prints which_children in OTP's order (newest first).
func (s *scen) childrenRaw(sup actor.Pid) {
	ts := s.childTuples(sup)
	l := make([]any, len(ts))
	for i := range ts {
		l[len(ts)-1-i] = ts[i]
	}
	s.ev("which_children", sup, l)
}

func countsList(n supervisor.Counts) []any {
	return []any{tup{"specs", n.Specs}, tup{"active", n.Active}, tup{"supervisors", n.Supervisors}, tup{"workers", n.Workers}}
}

func (s *scen) counts(sup actor.Pid) {
	n, err := supervisor.CountChildren(s.c, sup)
	if err != nil {
		panic(err)
	}
	s.ev("count_children", sup, countsList(n))
}

// awaitChild polls which_children until child id is in state: "undefined",
// "absent", "running" or "restarting".
func (s *scen) awaitChild(sup actor.Pid, id, state string) {
	for {
		cs, _ := supervisor.WhichChildren(s.c, sup)
		now := "absent"
		for _, ch := range cs {
			if ch.ID == id {
				switch {
				case ch.Restarting:
					now = "restarting"
				case ch.Pid.IsZero():
					now = "undefined"
				default:
					now = "running"
				}
			}
		}
		if now == state {
			return
		}
		s.c.Sleep(time.Millisecond)
	}
}

// runScenario runs body in a trapping main actor and returns the trace.
func runScenario(t *testing.T, body func(s *scen)) []string {
	t.Helper()
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
	}()
	tr := newTracer()
	done := make(chan struct{})
	ready := make(chan struct{})
	mainPid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) {
		if _, ok := msg.(string); !ok {
			return
		}
		defer close(done)
		body(&scen{mainProc{tracer: tr, c: c}})
		c.Stop(actor.Normal)
	}), actor.TrapExit())
	if err != nil {
		t.Fatal(err)
	}
	tr.main = mainPid
	tr.name(mainPid, "main")
	close(ready)
	sys.Send(mainPid, "go")
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("scenario did not finish; trace so far:\n%s", strings.Join(tr.lines, "\n"))
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.lines...)
}

var supScenarios = map[string]func(s *scen){
	"init_recomputed": func(s *scen) {
		t := s.tracer
		n := 0 // inits of sub; each runs in sub's actor, one incarnation after another
		sub := supervisor.ChildInit("sub", func(c *actor.Context) (supervisor.Spec, error) {
			t.name(c.Self(), "sub")
			n++
			t.ev("init", "sub", n)
			spec := flags(supervisor.OneForOne, 0)
			for i := 1; i <= n; i++ {
				spec.Children = append(spec.Children, s.w(fmt.Sprintf("sub%d", i)))
			}
			return spec, nil
		})
		top := s.startSup("top", flags(supervisor.OneForOne, 3), sub)
		s.awaitStart("sub1")
		m := s.mon(s.pid("sub"))
		s.crash("sub1", actor.Atom("boom"))
		s.awaitStart("sub1", "sub2")
		s.awaitDown(m)
		s.children(s.pid("sub"))
		s.stopSup(top)
		s.mailbox()
	},
	"one_for_one": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForOne, 3), s.w("w1"), s.w("w2"), s.w("w3"))
		s.awaitStart("w1", "w2", "w3")
		w1, w2, w3 := s.pid("w1"), s.pid("w2"), s.pid("w3")
		s.crash("w2", actor.Atom("boom"))
		s.awaitStart("w2")
		s.ev("same_pid", "w1", s.pid("w1") == w1)
		s.ev("same_pid", "w2", s.pid("w2") == w2)
		s.ev("same_pid", "w3", s.pid("w3") == w3)
		s.children(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"one_for_all": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForAll, 3), s.w("w1"), s.w("w2"), s.w("w3"))
		s.awaitStart("w1", "w2", "w3")
		s.crash("w2", actor.Atom("boom"))
		s.awaitStart("w1", "w2", "w3")
		s.children(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"one_for_all_temporary": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForAll, 3), s.w("w1"),
			s.worker("p2", supervisor.Temporary, wopts{}), s.worker("t3", supervisor.Transient, wopts{}))
		s.awaitStart("w1", "p2", "t3")
		s.crash("w1", actor.Atom("boom"))
		s.awaitStart("w1", "t3")
		s.children(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"rest_for_one": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.RestForOne, 5), s.w("w1"), s.w("w2"), s.w("w3"), s.w("w4"))
		s.awaitStart("w1", "w2", "w3", "w4")
		s.crash("w2", actor.Atom("boom"))
		s.awaitStart("w2", "w3", "w4")
		s.crash("w4", actor.Atom("boom"))
		s.awaitStart("w4")
		s.crash("w1", actor.Atom("boom"))
		s.awaitStart("w1", "w2", "w3", "w4")
		s.children(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"permanent": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForOne, 5), s.w("w1"), s.w("w2"))
		s.awaitStart("w1", "w2")
		for _, r := range []actor.Reason{actor.Normal, actor.Shutdown, actor.ShutdownWith{Reason: actor.Atom("x")}} {
			s.crash("w1", r)
			s.awaitStart("w1")
		}
		s.crash("w2", actor.Atom("boom"))
		s.awaitStart("w2")
		s.children(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"transient": func(s *scen) {
		tr := func(id string) supervisor.ChildSpec { return s.worker(id, supervisor.Transient, wopts{}) }
		sup := s.startSup("sup", flags(supervisor.OneForOne, 5), tr("t1"), tr("t2"), tr("t3"), tr("t4"))
		s.awaitStart("t1", "t2", "t3", "t4")
		s.crash("t1", actor.Normal)
		s.awaitChild(sup, "t1", "undefined")
		s.crash("t2", actor.Shutdown)
		s.awaitChild(sup, "t2", "undefined")
		s.crash("t3", actor.ShutdownWith{Reason: actor.Atom("x")})
		s.awaitChild(sup, "t3", "undefined")
		s.crash("t4", actor.Atom("boom"))
		s.awaitStart("t4")
		s.children(sup)
		s.counts(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"temporary": func(s *scen) {
		tmp := func(id string) supervisor.ChildSpec { return s.worker(id, supervisor.Temporary, wopts{}) }
		sup := s.startSup("sup", flags(supervisor.OneForOne, 5), tmp("p1"), tmp("p2"), s.w("w3"))
		s.awaitStart("p1", "p2", "w3")
		s.crash("p1", actor.Atom("boom"))
		s.awaitChild(sup, "p1", "absent")
		s.crash("p2", actor.Normal)
		s.awaitChild(sup, "p2", "absent")
		s.children(sup)
		s.counts(sup)
		pid, err := supervisor.RestartChild(s.c, sup, "p1")
		s.ev("restart_child", "p1", okResult(pid, err))
		s.stopSup(sup)
		s.mailbox()
	},
	"intensity_exceeded": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForOne, 2), s.w("w1"), s.w("w2"))
		s.awaitStart("w1", "w2")
		m := s.mon(sup)
		s.crash("w1", actor.Atom("boom"))
		s.awaitStart("w1")
		s.crash("w1", actor.Atom("boom"))
		s.awaitStart("w1")
		s.crash("w1", actor.Atom("boom"))
		s.awaitDown(m)
		s.awaitExit(sup)
		s.mailbox()
	},
	"nested_intensity": func(s *scen) {
		strict := flags(supervisor.OneForOne, 0)
		sub2 := s.subsup("sub2", strict, s.w("b1"))
		sub2.Restart = supervisor.Transient
		top := s.startSup("top", flags(supervisor.OneForOne, 5),
			s.subsup("sub1", strict, s.w("a1"), s.w("a2")), sub2, s.w("w3"))
		s.awaitStart("a1", "a2", "b1", "w3")
		m1 := s.mon(s.pid("sub1"))
		s.crash("a1", actor.Atom("boom"))
		s.awaitStart("a1", "a2") // before the Down: the restarted workers print as main would
		s.awaitDown(m1)
		m2 := s.mon(s.pid("sub2"))
		s.crash("b1", actor.Atom("boom"))
		s.awaitDown(m2)
		s.awaitChild(top, "sub2", "undefined")
		s.children(top)
		s.children(s.pid("sub1"))
		s.stopSup(top)
		s.mailbox()
	},
	"shutdown_order": func(s *scen) {
		top := s.startSup("top", flags(supervisor.OneForOne, 1), s.w("w1"), s.w("w2"),
			s.subsup("sub", flags(supervisor.OneForOne, 1), s.w("s1"), s.w("s2"), s.w("s3")), s.w("w4"))
		s.awaitStart("w1", "w2", "s1", "s2", "s3", "w4")
		s.stopSup(top)
		s.mailbox()
	},
	"brutal_kill_vs_timeout": func(s *scen) {
		w1 := s.w("w1")
		w1.Shutdown = supervisor.BrutalKill
		w2 := s.worker("w2", supervisor.Permanent, wopts{stall: "forever"})
		w2.Shutdown = 100 * time.Millisecond
		w3 := s.w("w3")
		w3.Shutdown = 5 * time.Second
		sup := s.startSup("sup", flags(supervisor.OneForOne, 1), w1, w2, w3)
		s.awaitStart("w1", "w2", "w3")
		var ms []actor.Ref
		for _, w := range []string{"w1", "w2", "w3"} {
			ms = append(ms, s.mon(s.pid(w)))
		}
		s.stopSup(sup)
		s.awaitStalling("w2")
		for _, m := range ms {
			s.awaitDown(m)
		}
		s.mailbox()
	},
	"infinity_shutdown": func(s *scen) {
		w2 := s.worker("w2", supervisor.Permanent, wopts{stall: "release"})
		w2.Shutdown = supervisor.Infinity
		sup := s.startSup("sup", flags(supervisor.OneForOne, 1), s.w("w1"), w2)
		s.awaitStart("w1", "w2")
		m := s.mon(sup)
		s.c.Exit(sup, actor.Shutdown)
		s.awaitStalling("w2")
		s.c.Sleep(200 * time.Millisecond)
		s.ev("alive", sup, s.c.System().Alive(sup))
		s.ev("alive", s.pid("w1"), s.c.System().Alive(s.pid("w1")))
		s.c.Send(s.pid("w2"), release{})
		s.awaitDown(m)
		s.awaitExit(sup)
		s.mailbox()
	},
	"significant_any": func(s *scen) {
		fl := flags(supervisor.OneForOne, 3)
		fl.AutoShutdown = supervisor.AnySignificant
		sig := s.worker("s1", supervisor.Transient, wopts{})
		sig.Significant = true
		sup := s.startSup("sup", fl, s.w("w1"), sig, s.w("w3"))
		s.awaitStart("w1", "s1", "w3")
		s.crash("s1", actor.Atom("boom"))
		s.awaitStart("s1")
		m := s.mon(sup)
		s.crash("s1", actor.Normal)
		s.awaitDown(m)
		s.awaitExit(sup)
		bad := s.w("p1")
		bad.Significant = true
		fl.Children = []supervisor.ChildSpec{bad}
		_, err := supervisor.StartLink(s.c, fl)
		if se, ok := err.(*actor.StartError); ok {
			s.ev("start_link", "sup2", "error", se.Reason)
		} else {
			s.ev("start_link", "sup2", "unexpected", fmt.Sprint(err))
		}
		s.c.Receive(func(m any) bool { _, ok := m.(actor.Exit); return ok }, actor.Infinity)
		s.mailbox()
	},
	"significant_all": func(s *scen) {
		fl := flags(supervisor.OneForOne, 3)
		fl.AutoShutdown = supervisor.AllSignificant
		s1 := s.worker("s1", supervisor.Transient, wopts{})
		s1.Significant = true
		s2 := s.worker("s2", supervisor.Temporary, wopts{})
		s2.Significant = true
		sup := s.startSup("sup", fl, s.w("w1"), s1, s2)
		s.awaitStart("w1", "s1", "s2")
		s.crash("s1", actor.ShutdownWith{Reason: actor.Atom("x")})
		s.awaitChild(sup, "s1", "undefined")
		s.children(sup)
		m := s.mon(sup)
		s.crash("s2", actor.Atom("boom"))
		s.awaitDown(m)
		s.awaitExit(sup)
		s.mailbox()
	},
	"simple_one_for_one": func(s *scen) {
		t := s.tracer
		tmpl := supervisor.ChildSpec{ID: "dyn", Start: supervisor.ServerStart(func(args ...any) actor.Server {
			return &worker{t: t, id: args[0].(string), opts: wopts{quietShutdown: true}}
		})}
		sup := s.startSup("sup", flags(supervisor.SimpleOneForOne, 3), tmpl)
		for _, d := range []string{"d1", "d2", "d3"} {
			pid, err := supervisor.StartChildArgs(s.c, sup, d)
			s.awaitStart(d)
			s.ev("start_child", sup, d, okResult(pid, err))
		}
		s.crash("d2", actor.Atom("boom"))
		s.awaitStart("d2")
		s.counts(sup)
		s.children(sup)
		var ms []actor.Ref
		for _, d := range []string{"d1", "d2", "d3"} {
			ms = append(ms, s.mon(s.pid(d)))
		}
		s.stopSup(sup)
		for _, m := range ms {
			s.awaitDown(m)
		}
		s.mailbox()
	},
	"simple_one_for_one_many": func(s *scen) {
		t := s.tracer
		tmpl := supervisor.ChildSpec{ID: "dyn", Restart: supervisor.Temporary, Start: supervisor.ServerStart(func(args ...any) actor.Server {
			return &worker{t: t, id: args[0].(string), opts: wopts{quiet: true}}
		})}
		sup := s.startSup("sup", flags(supervisor.SimpleOneForOne, 1), tmpl)
		var ids []string
		oks := map[string]bool{}
		for n := 1; n <= 100; n++ {
			id := fmt.Sprintf("d%d", n)
			ids = append(ids, id)
			_, err := supervisor.StartChildArgs(s.c, sup, id)
			oks[fmt.Sprint(okOrErr(err))] = true
		}
		s.ev("start_child", 100, usort(oks))
		s.counts(sup)
		rs := map[string]bool{}
		for _, id := range ids[:10] {
			rs[fmt.Sprint(okOrErr(supervisor.TerminateChildPid(s.c, sup, s.pid(id))))] = true
		}
		s.ev("terminate_child", 10, usort(rs))
		s.ev("terminate_child", "d1", okOrErr(supervisor.TerminateChildPid(s.c, sup, s.pid("d1"))))
		s.counts(sup)
		cs, _ := supervisor.WhichChildren(s.c, sup)
		s.ev("which_children", "length", len(cs))
		s.ev("terminate_child", "dyn", okOrErr(supervisor.TerminateChild(s.c, sup, "dyn")))
		pid, err := supervisor.RestartChild(s.c, sup, "dyn")
		s.ev("restart_child", "dyn", okResult(pid, err))
		s.ev("delete_child", "dyn", okOrErr(supervisor.DeleteChild(s.c, sup, "dyn")))
		m := s.mon(sup)
		s.c.Exit(sup, actor.Shutdown)
		s.awaitDown(m)
		s.awaitExit(sup)
		var alive []any
		for _, id := range ids {
			if s.c.System().Alive(s.pid(id)) {
				alive = append(alive, id)
			}
		}
		s.ev("alive_children", alive)
		s.mailbox()
	},
	"start_failure_rollback": func(s *scen) {
		s.startSup("sup", flags(supervisor.OneForOne, 1), s.w("w1"), s.w("w2"),
			s.worker("w3", supervisor.Permanent, wopts{init: "stop", stopReason: actor.Atom("boom")}), s.w("w4"))
		s.awaitStart("w1", "w2")
		var alive []any
		for _, w := range []string{"w1", "w2"} {
			alive = append(alive, s.c.System().Alive(s.pid(w)))
		}
		s.ev("alive_children", alive)
	},
	"start_child_errors": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForOne, 1), s.w("w1"),
			s.worker("w2", supervisor.Permanent, wopts{init: "ignore"}))
		s.awaitStart("w1")
		_, err := supervisor.StartChild(s.c, sup, s.worker("w3", supervisor.Permanent, wopts{init: "stop", stopReason: actor.Atom("boom")}))
		if ce, ok := err.(*supervisor.ChildStartError); ok {
			s.ev("start_child", "w3", "error", ce.Reason)
		} else {
			s.ev("start_child", "w3", "unexpected", fmt.Sprint(err))
		}
		pid, err := supervisor.StartChild(s.c, sup, s.worker("w4", supervisor.Permanent, wopts{init: "ignore"}))
		s.ev("start_child", "w4", okResult(pid, err))
		pid, err = supervisor.StartChild(s.c, sup, s.w("w1"))
		s.ev("start_child", "w1", okResult(pid, err))
		pid, err = supervisor.StartChild(s.c, sup, s.w("w2"))
		s.ev("start_child", "w2", okResult(pid, err))
		pid, err = supervisor.StartChild(s.c, sup, s.w("w5"))
		s.awaitStart("w5")
		s.ev("start_child", "w5", okResult(pid, err))
		s.children(sup)
		s.counts(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"terminate_restart_delete": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForOne, 1), s.w("w1"), s.w("w2"), s.w("w3"))
		s.awaitStart("w1", "w2", "w3")
		s.ev("terminate_child", "w2", okOrErr(supervisor.TerminateChild(s.c, sup, "w2")))
		s.children(sup)
		s.ev("terminate_child", "w2", okOrErr(supervisor.TerminateChild(s.c, sup, "w2")))
		pid, err := supervisor.RestartChild(s.c, sup, "w2")
		s.awaitStart("w2")
		s.ev("restart_child", "w2", okResult(pid, err))
		pid, err = supervisor.RestartChild(s.c, sup, "w2")
		s.ev("restart_child", "w2", okResult(pid, err))
		s.ev("delete_child", "w2", okOrErr(supervisor.DeleteChild(s.c, sup, "w2")))
		s.ev("terminate_child", "w2", okOrErr(supervisor.TerminateChild(s.c, sup, "w2")))
		s.ev("delete_child", "w2", okOrErr(supervisor.DeleteChild(s.c, sup, "w2")))
		s.ev("delete_child", "w2", okOrErr(supervisor.DeleteChild(s.c, sup, "w2")))
		pid, err = supervisor.RestartChild(s.c, sup, "w2")
		s.ev("restart_child", "w2", okResult(pid, err))
		s.ev("terminate_child", "nope", okOrErr(supervisor.TerminateChild(s.c, sup, "nope")))
		s.ev("terminate_child", "w3", okOrErr(supervisor.TerminateChildPid(s.c, sup, s.pid("w3"))))
		s.children(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"which_children": func(s *scen) {
		sub := flags(supervisor.OneForOne, 1)
		sup := s.startSup("sup", flags(supervisor.OneForOne, 1), s.w("w1"),
			s.worker("w2", supervisor.Permanent, wopts{init: "ignore"}),
			s.subsup("sub", sub, s.w("x1"), s.worker("x2", supervisor.Temporary, wopts{})),
			s.worker("w3", supervisor.Transient, wopts{}))
		s.awaitStart("w1", "x1", "x2", "w3")
		s.childrenRaw(sup)
		s.counts(sup)
		s.childrenRaw(s.pid("sub"))
		s.counts(s.pid("sub"))
		s.stopSup(sup)
		s.mailbox()
	},
	"restart_child_results": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForOne, 1), s.w("w1"),
			s.worker("w2", supervisor.Permanent, wopts{init: "ignore"}),
			s.worker("w3", supervisor.Permanent, wopts{init: "switch"}))
		s.awaitStart("w1", "w3")
		pid, err := supervisor.RestartChild(s.c, sup, "w2")
		s.ev("restart_child", "w2", okResult(pid, err))
		s.setSwitch("w3", wopts{init: "stop", stopReason: actor.Atom("boom")})
		s.ev("terminate_child", "w3", okOrErr(supervisor.TerminateChild(s.c, sup, "w3")))
		pid, err = supervisor.RestartChild(s.c, sup, "w3")
		s.ev("restart_child", "w3", okResult(pid, err))
		s.children(sup)
		s.setSwitch("w3", wopts{init: "ignore"})
		pid, err = supervisor.RestartChild(s.c, sup, "w3")
		s.ev("restart_child", "w3", okResult(pid, err))
		s.setSwitch("w3", wopts{})
		pid, err = supervisor.RestartChild(s.c, sup, "w3")
		s.awaitStart("w3")
		s.ev("restart_child", "w3", okResult(pid, err))
		pid, err = supervisor.StartChild(s.c, sup, s.worker("t4", supervisor.Temporary, wopts{}))
		s.awaitStart("t4")
		s.ev("start_child", "t4", okResult(pid, err))
		s.ev("terminate_child", "t4", okOrErr(supervisor.TerminateChild(s.c, sup, "t4")))
		pid, err = supervisor.RestartChild(s.c, sup, "t4")
		s.ev("restart_child", "t4", okResult(pid, err))
		s.ev("delete_child", "t4", okOrErr(supervisor.DeleteChild(s.c, sup, "t4")))
		pid, err = supervisor.StartChild(s.c, sup, s.w("w5"))
		s.awaitStart("w5")
		s.ev("start_child", "w5", okResult(pid, err))
		s.ev("terminate_child", "w5", okOrErr(supervisor.TerminateChildPid(s.c, sup, s.pid("w5"))))
		s.children(sup)
		s.counts(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"restart_retry": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForOne, 1000000), s.w("w1"),
			s.worker("w2", supervisor.Permanent, wopts{init: "switch"}))
		s.awaitStart("w1", "w2")
		s.setSwitch("w2", wopts{init: "stop", stopReason: actor.Atom("boom")})
		s.crash("w2", actor.Atom("boom"))
		s.awaitChild(sup, "w2", "restarting")
		s.children(sup)
		s.counts(sup)
		pid, err := supervisor.RestartChild(s.c, sup, "w2")
		s.ev("restart_child", "w2", okResult(pid, err))
		s.ev("delete_child", "w2", okOrErr(supervisor.DeleteChild(s.c, sup, "w2")))
		s.ev("terminate_child", "w2", okOrErr(supervisor.TerminateChild(s.c, sup, "w2")))
		s.children(sup)
		s.counts(sup)
		s.setSwitch("w2", wopts{})
		pid, err = supervisor.RestartChild(s.c, sup, "w2")
		s.awaitStart("w2")
		s.ev("restart_child", "w2", okResult(pid, err))
		s.children(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"no_restart_siblings": func(s *scen) {
		for _, st := range []supervisor.Strategy{supervisor.OneForAll, supervisor.RestForOne} {
			s.ev("strategy", st.String())
			tmp := func(id string) supervisor.ChildSpec { return s.worker(id, supervisor.Temporary, wopts{}) }
			tr := func(id string) supervisor.ChildSpec { return s.worker(id, supervisor.Transient, wopts{}) }
			sup := s.startSup("sup", flags(st, 1), s.w("w1"), tmp("p2"), tmp("p3"), tr("t4"), tr("t5"), s.w("w6"))
			ws := []string{"w1", "p2", "p3", "t4", "t5", "w6"}
			s.awaitStart(ws...)
			pids := map[string]actor.Pid{}
			for _, w := range ws {
				pids[w] = s.pid(w)
			}
			s.crash("p2", actor.Atom("boom"))
			s.awaitChild(sup, "p2", "absent")
			s.crash("p3", actor.Normal)
			s.awaitChild(sup, "p3", "absent")
			s.crash("t4", actor.Normal)
			s.awaitChild(sup, "t4", "undefined")
			s.crash("t5", actor.Shutdown)
			s.awaitChild(sup, "t5", "undefined")
			var same []any
			for _, w := range ws {
				if s.pid(w) == pids[w] {
					same = append(same, w)
				}
			}
			s.ev("same_pids", same)
			s.children(sup)
			s.counts(sup)
			s.stopSup(sup)
		}
		s.mailbox()
	},
	"rest_for_one_temporary": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.RestForOne, 3), s.w("w1"), s.w("w2"),
			s.worker("p3", supervisor.Temporary, wopts{}), s.worker("t4", supervisor.Transient, wopts{}), s.w("w5"))
		s.awaitStart("w1", "w2", "p3", "t4", "w5")
		w1 := s.pid("w1")
		s.crash("w2", actor.Atom("boom"))
		s.awaitStart("w2", "t4", "w5")
		s.ev("same_pid", "w1", s.pid("w1") == w1)
		s.children(sup)
		s.counts(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"cascade_intensity": func(s *scen) {
		strict := flags(supervisor.OneForOne, 0)
		top := s.startSup("top", strict, s.w("w1"), s.subsup("sub", strict, s.w("a1"), s.w("a2")), s.w("w3"))
		s.awaitStart("w1", "a1", "a2", "w3")
		ms := []actor.Ref{s.mon(top), s.mon(s.pid("sub"))}
		s.crash("a1", actor.Atom("boom"))
		for _, m := range ms {
			s.awaitDown(m)
		}
		s.awaitExit(top)
		s.mailbox()
	},
	"nested_one_for_all": func(s *scen) {
		strict := flags(supervisor.OneForOne, 0)
		top := s.startSup("top", flags(supervisor.OneForAll, 3), s.w("w1"),
			s.subsup("sub", strict, s.w("a1"), s.w("a2")), s.w("w3"))
		s.awaitStart("w1", "a1", "a2", "w3")
		m := s.mon(s.pid("sub"))
		s.crash("a1", actor.Atom("boom"))
		s.awaitStart("w1", "a1", "a2", "w3")
		s.awaitDown(m)
		s.children(top)
		s.children(s.pid("sub"))
		s.counts(top)
		s.stopSup(top)
		s.mailbox()
	},
	"terminate_child_shutdown": func(s *scen) {
		w2 := s.worker("w2", supervisor.Permanent, wopts{stall: "forever"})
		w2.Shutdown = 100 * time.Millisecond
		w3 := s.w("w3")
		w3.Shutdown = supervisor.BrutalKill
		sup := s.startSup("sup", flags(supervisor.OneForOne, 1), s.w("w1"), w2, w3)
		s.awaitStart("w1", "w2", "w3")
		m2 := s.mon(s.pid("w2"))
		s.ev("terminate_child", "w2", okOrErr(supervisor.TerminateChild(s.c, sup, "w2")))
		s.awaitStalling("w2")
		s.awaitDown(m2)
		m3 := s.mon(s.pid("w3"))
		s.ev("terminate_child", "w3", okOrErr(supervisor.TerminateChild(s.c, sup, "w3")))
		s.awaitDown(m3)
		s.children(sup)
		pid, err := supervisor.RestartChild(s.c, sup, "w3")
		s.awaitStart("w3")
		s.ev("restart_child", "w3", okResult(pid, err))
		s.children(sup)
		s.stopSup(sup)
		s.mailbox()
	},
	"shutdown_linked": func(s *scen) {
		sup := s.startSup("sup", flags(supervisor.OneForOne, 1),
			s.worker("w1", supervisor.Permanent, wopts{links: true}),
			s.worker("w2", supervisor.Permanent, wopts{links: true}))
		s.awaitStart("w1", "w2")
		s.ev("terminate_child", "w1", okOrErr(supervisor.TerminateChild(s.c, sup, "w1")))
		s.stopSup(sup)
		t := s.tracer
		tmpl := supervisor.ChildSpec{ID: "dyn", Restart: supervisor.Temporary, Start: supervisor.ServerStart(func(args ...any) actor.Server {
			return &worker{t: t, id: args[0].(string), opts: wopts{links: true}}
		})}
		dyn := s.startSup("dyn", flags(supervisor.SimpleOneForOne, 1), tmpl)
		pid, err := supervisor.StartChildArgs(s.c, dyn, "d")
		s.awaitStart("d")
		s.ev("start_child", dyn, "d", okResult(pid, err))
		s.stopSup(dyn)
		s.mailbox()
	},
	"significant_terminate": func(s *scen) {
		fl := flags(supervisor.OneForAll, 3)
		fl.AutoShutdown = supervisor.AnySignificant
		s2 := s.worker("s2", supervisor.Transient, wopts{})
		s2.Significant = true
		sup := s.startSup("sup", fl, s.w("w1"), s2, s.w("w3"))
		s.awaitStart("w1", "s2", "w3")
		s.ev("terminate_child", "s2", okOrErr(supervisor.TerminateChild(s.c, sup, "s2")))
		s.children(sup)
		pid, err := supervisor.RestartChild(s.c, sup, "s2")
		s.awaitStart("s2")
		s.ev("restart_child", "s2", okResult(pid, err))
		s.crash("w3", actor.Atom("boom"))
		s.awaitStart("w1", "s2", "w3")
		s.children(sup)
		m := s.mon(sup)
		s.crash("s2", actor.Normal)
		s.awaitDown(m)
		s.awaitExit(sup)
		s.mailbox()
	},
	"restart_retry_all": func(s *scen) {
		quiet := wopts{quiet: true}
		sup := s.startSup("sup", flags(supervisor.OneForAll, 1000000), s.worker("w1", supervisor.Permanent, quiet),
			s.worker("w2", supervisor.Permanent, wopts{init: "switch"}), s.worker("w3", supervisor.Permanent, quiet))
		s.awaitStart("w2")
		s.setSwitch("w2", wopts{init: "stop", stopReason: actor.Atom("boom")})
		s.crash("w1", actor.Atom("boom"))
		s.awaitChild(sup, "w2", "restarting")
		s.children(sup)
		s.counts(sup)
		pid, err := supervisor.RestartChild(s.c, sup, "w3")
		s.ev("restart_child", "w3", okResult(pid, err))
		s.awaitChild(sup, "w3", "undefined")
		s.setSwitch("w2", wopts{})
		s.awaitStart("w2")
		s.awaitChild(sup, "w3", "running")
		s.children(sup)
		s.counts(sup)
		s.stopSup(sup)
		s.mailbox()
	},
}

func usort(set map[string]bool) []any {
	var ks []string
	for k := range set {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	out := make([]any, len(ks))
	for i, k := range ks {
		out[i] = k
	}
	return out
}

func TestSupervisorDiff(t *testing.T) {
	runGroup(t, "supervisor", supScenarios, runScenario)
}
