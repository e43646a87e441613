package main

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// Errors of the scheduler's calls, besides the runtime's own (actor.ErrTimeout,
// or an error that is actor.ErrNoProc when the scheduler is down).
var (
	ErrNoJob     = errors.New("cron: no such job")
	ErrJobExists = errors.New("cron: job already defined")
	ErrBadJob    = errors.New("cron: bad job definition")
	ErrOverrun   = errors.New("cron: run exceeded its max run time")
)

// Work is a job's body. It runs in a runner actor, so it may block the
// runtime's way (c.Sleep, c.Call, c.Receive); a kill (max run time, cancel,
// Shutdown) unwinds it there. Blocking outside the runtime (a plain
// time.Sleep, a syscall) holds a scheduler role until the watchdog hands it
// on, and is reported: hand such work to a goroutine of its own. A returned
// error is a failed run, retried per Job.Retries; a panic is a crash, which
// the runners' supervisor restarts (the same run, same attempt).
type Work func(c *actor.Context, r Run) error

// Job is one job's definition. Exactly one of Every and At is set.
type Job struct {
	Name          string
	Every         time.Duration // run every Every, the first time Every after Add
	At            time.Duration // or daily, At after local midnight (0 < At < 24h)
	MaxRun        time.Duration // a run still going after MaxRun is killed; 0: no limit
	MaxConcurrent int           // runs of this job at once; 0: 1. A due run past it is skipped
	Retries       int           // a failed run is tried again up to Retries times
	Backoff       time.Duration // before the first retry (doubled for each next one, up to an hour); 0: 100ms
	Work          Work
}

func (j Job) check() (Job, error) {
	switch {
	case j.Name == "", j.Work == nil:
		return j, fmt.Errorf("%w: %q needs a name and a Work", ErrBadJob, j.Name)
	case (j.Every > 0) == (j.At > 0), j.Every < 0, j.At < 0, j.At >= 24*time.Hour:
		return j, fmt.Errorf("%w: %q needs one of Every > 0 or 0 < At < 24h", ErrBadJob, j.Name)
	case j.MaxRun < 0, j.MaxConcurrent < 0, j.Retries < 0, j.Backoff < 0:
		return j, fmt.Errorf("%w: %q has a negative field", ErrBadJob, j.Name)
	}
	if j.MaxConcurrent == 0 {
		j.MaxConcurrent = 1
	}
	if j.Backoff == 0 {
		j.Backoff = 100 * time.Millisecond
	}
	return j, nil
}

// untilNext is the time from now to the next at after local midnight.
func untilNext(now time.Time, at time.Duration) time.Duration {
	y, m, d := now.Date()
	next := time.Date(y, m, d, 0, 0, 0, 0, now.Location()).Add(at)
	if !next.After(now) {
		next = time.Date(y, m, d+1, 0, 0, 0, 0, now.Location()).Add(at)
	}
	return next.Sub(now)
}

// Run names one run of a job: its id, and which attempt it is (0 for the
// scheduled run, n for its n-th retry).
type Run struct {
	ID      uint64
	Job     string
	Attempt int
}

// Outcome is how a run (or one incarnation of it) ended.
type Outcome string

const (
	OK        Outcome = "ok"        // Work returned nil
	Failed    Outcome = "failed"    // Work returned an error
	Crashed   Outcome = "crashed"   // Work panicked (restarted unless the supervisor gave up)
	Killed    Outcome = "killed"    // it ran past MaxRun
	Cancelled Outcome = "cancelled" // its job was cancelled while it ran
	Lost      Outcome = "lost"      // it could not be started, or ended without a word
)

// Entry is one line of a job's history.
type Entry struct {
	Run
	Started, Ended time.Time
	Outcome        Outcome
	Err            string
}

// JobStatus is the operator's view of one job.
type JobStatus struct {
	Name    string
	Paused  bool
	NextIn  time.Duration // to the next due run (ReadTimer); paused: what was left at the pause
	Running int

	Runs    int // runs started, retries included
	Retried int // of which retries
	OK      int
	Failed  int
	Crashed int // incarnations that panicked
	Killed  int // runs past MaxRun
	Skipped int // due runs not started: at MaxConcurrent, or a retry while paused
}

// Metrics are counted by the runners' supervisor Hooks, outside the scheduler.
type Metrics struct {
	Exited, Crashed, Restarted, GaveUp atomic.Int64
}

// Options configure the service; zero fields take defaults.
type Options struct {
	Name       string // the scheduler's registered name; default "cron"
	HistoryLen int    // entries kept per job; default 50
}

// Cron is a handle on a started scheduler: its registered name. Every method
// is a call bounded by timeout.
type Cron struct{ Name string }

// Calls to the scheduler.
type (
	addReq     struct{ job Job }
	updateReq  struct{ job Job }
	cancelReq  struct{ name string } // priority
	pauseReq   struct{ name string } // priority
	resumeReq  struct{ name string }
	runNow     struct{ name string } // a cast
	historyReq struct{ name string }
	statusReq  struct{}
)

// The scheduler's own messages: from its timers, its runners and the
// runners' supervisor.
type (
	// fire: StartTimer of an Every job's first run, or of a daily run.
	fire struct{ name string }
	// tick: an Every job's SendInterval.
	tick struct {
		name string
		gen  uint64
	}
	// retry: StartTimer, a failed run's backoff is over.
	retry struct {
		name    string
		attempt int
	}
	// overrun: StartTimer, a run's MaxRun is over.
	overrun struct{ id uint64 }
	// started: a runner's Init (again after a restart).
	started struct {
		id  uint64
		pid actor.Pid
	}
	// finished: a runner's Work returned.
	finished struct {
		id  uint64
		err error
	}
	// runnerExit: the runners' supervisor saw a runner die.
	runnerExit struct {
		pid     actor.Pid
		reason  actor.Reason
		restart bool
	}
	// freeze holds the scheduler in a selective receive until thaw (tests).
	freeze struct{}
	thaw   struct{}
)

func (cr Cron) call(c actor.Caller, req any, timeout time.Duration) error {
	_, err := actor.CallName[struct{}](c, cr.Name, req, timeout)
	return err
}

// Add defines a new job and arms its timer.
func (cr Cron) Add(c actor.Caller, j Job, timeout time.Duration) error {
	return cr.call(c, addReq{j}, timeout)
}

// Update replaces a job's definition. Runs in flight go on; the next run is
// due at the sooner of what was left on the old timer and the new schedule.
func (cr Cron) Update(c actor.Caller, j Job, timeout time.Duration) error {
	return cr.call(c, updateReq{j}, timeout)
}

// Cancel removes a job: its timers and pending retries are cancelled and its
// runs in flight killed; it never runs again. It overtakes queued work.
func (cr Cron) Cancel(c actor.Caller, name string, timeout time.Duration) error {
	return cr.call(c, cancelReq{name}, timeout)
}

// Pause stops a job's timer, keeping what was left on it; pending retries
// are skipped while it is paused. It overtakes queued work.
func (cr Cron) Pause(c actor.Caller, name string, timeout time.Duration) error {
	return cr.call(c, pauseReq{name}, timeout)
}

// Resume re-arms a paused job's timer with what was left on it.
func (cr Cron) Resume(c actor.Caller, name string, timeout time.Duration) error {
	return cr.call(c, resumeReq{name}, timeout)
}

// RunNow asks for a run at once, by a cast: it is queued work, as a tick is,
// so a Cancel or Pause queued after it overtakes it. The run is skipped, as a
// due run is, if the job is paused or at its MaxConcurrent; nothing happens
// for a job that does not exist (when the cast is handled).
func (cr Cron) RunNow(s actor.Sender, name string) error {
	return actor.CastName(s, cr.Name, runNow{name})
}

// History returns a job's last entries, oldest first; a cancelled job's
// history stays.
func (cr Cron) History(c actor.Caller, name string, timeout time.Duration) ([]Entry, error) {
	return actor.CallName[[]Entry](c, cr.Name, historyReq{name}, timeout)
}

// Status returns every job's status, by name.
func (cr Cron) Status(c actor.Caller, timeout time.Duration) ([]JobStatus, error) {
	return actor.CallName[[]JobStatus](c, cr.Name, statusReq{}, timeout)
}

// Start starts the service in sys: a rest_for_one supervisor of a
// simple_one_for_one supervisor of job runners, then the scheduler, a
// gen_server under opt.Name. If the runners' supervisor dies, the scheduler
// is restarted after it (its runs are gone): its jobs and history are
// lost then, as a restarted gen_server's state is; a service that needs them
// would reload them in Init.
func Start(sys *actor.System, opt Options) (Cron, actor.Pid, *Metrics, error) {
	if opt.Name == "" {
		opt.Name = "cron"
	}
	if opt.HistoryLen <= 0 {
		opt.HistoryLen = 50
	}
	runnersName := opt.Name + ".runners"
	m := &Metrics{}
	// The hooks run in the runners' supervisor; they must not block. They
	// count, and tell the scheduler of each runner's death and whether it
	// will be restarted, which only the supervisor knows. A hook gets no
	// Context, so it sends through sys.
	hooks := &supervisor.Hooks{
		ChildExited: func(_ actor.Pid, _ string, pid actor.Pid, reason actor.Reason, restart bool) {
			m.Exited.Add(1)
			if !actor.IsNormal(reason) && !actor.IsShutdown(reason) {
				m.Crashed.Add(1)
			}
			sys.SendName(opt.Name, runnerExit{pid, reason, restart})
		},
		Restarted: func(actor.Pid, string, actor.Pid, actor.Pid) { m.Restarted.Add(1) },
		GaveUp:    func(actor.Pid) { m.GaveUp.Add(1) },
	}
	runners := supervisor.Spec{
		Strategy:  supervisor.SimpleOneForOne,
		Name:      runnersName,
		Intensity: 100, Period: time.Second,
		Hooks: hooks,
		Children: []supervisor.ChildSpec{{
			ID:    "run",
			Start: supervisor.ServerStart(newRunner),
			// A crashed run is restarted; one that returned is not.
			Restart: supervisor.Transient,
			// The scheduler stops a run with TerminateChildPid, which
			// kills it without a restart (an Exit with Kill would be an
			// abnormal exit, and a transient child is restarted after one).
			Shutdown: supervisor.BrutalKill,
		}},
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.RestForOne,
		Name:     opt.Name + ".sup",
		Children: []supervisor.ChildSpec{
			supervisor.Child("runners", runners),
			{ID: "scheduler", Start: supervisor.ServerStart(
				func(...any) actor.Server { return newScheduler(opt, runnersName) },
				actor.WithSpawn(actor.Name(opt.Name)))},
		},
	})
	return Cron{opt.Name}, sup, m, err
}

// runner is one run of a job: a transient child of the runners' supervisor.
type runner struct {
	actor.ServerBase
	sched actor.Pid
	run   Run
	work  Work
}

func newRunner(args ...any) actor.Server {
	return &runner{sched: args[0].(actor.Pid), run: args[1].(Run), work: args[2].(Work)}
}

// Init tells the scheduler the run's (new) pid: after a restart it is the
// scheduler's only way to learn it. The Work runs after the start returns.
func (r *runner) Init(c *actor.Context) error {
	c.Send(r.sched, started{r.run.ID, c.Self()})
	return actor.Continue(nil)
}

func (r *runner) HandleContinue(c *actor.Context, _ any) {
	err := r.work(c, r.run)
	c.Send(r.sched, finished{r.run.ID, err})
	c.Stop(actor.Normal)
}

// jobState is the scheduler's record of one job.
type jobState struct {
	Job
	gen      uint64         // bumped at each (re)arm: a tick of an older gen is stale
	timer    actor.TimerRef // pending StartTimer: an Every job's first run, a daily run
	interval actor.TimerRef // an Every job's SendInterval, once it runs
	paused   bool
	left     time.Duration          // what was left on the timer at the pause
	retries  map[actor.TimerRef]int // pending retries: their attempt
	st       JobStatus
}

// runState is one run in flight.
type runState struct {
	Run
	pid      actor.Pid // zero while the supervisor restarts it
	started  time.Time
	deadline actor.TimerRef
}

type scheduler struct {
	actor.ServerBase
	opt         Options
	runnersName string
	runners     actor.Pid
	jobs        map[string]*jobState
	runs        map[uint64]*runState
	byPid       map[actor.Pid]uint64
	hist        map[string][]Entry
	nextID      uint64
}

func newScheduler(opt Options, runnersName string) *scheduler {
	return &scheduler{opt: opt, runnersName: runnersName, jobs: map[string]*jobState{},
		runs: map[uint64]*runState{}, byPid: map[actor.Pid]uint64{}, hist: map[string][]Entry{}}
}

func (s *scheduler) Init(c *actor.Context) error {
	pid, ok := c.System().Whereis(s.runnersName)
	if !ok {
		return fmt.Errorf("cron: no runners supervisor %q", s.runnersName)
	}
	s.runners = pid
	return nil
}

// isPriority matches the commands that overtake queued work: calls of
// Cancel and Pause. (Only calls can be matched: a Cast arrives wrapped in a
// type of the actor package's own, which a selective receive cannot name.)
func isPriority(m any) bool {
	r, ok := m.(actor.Request)
	if !ok {
		return false
	}
	switch r.Msg.(type) {
	case cancelReq, pauseReq:
		return true
	}
	return false
}

// drainPriority handles the priority commands queued behind the message at
// hand before that message's work is done: Receive with a zero timeout only
// looks, in mailbox order, and leaves the rest where it was.
func (s *scheduler) drainPriority(c *actor.Context) {
	for {
		m, err := c.Receive(isPriority, 0)
		if err != nil {
			return
		}
		s.HandleCall(c, m.(actor.Request))
	}
}

func (s *scheduler) HandleCall(c *actor.Context, req actor.Request) {
	var err error
	switch m := req.Msg.(type) {
	case addReq:
		err = s.add(c, m.job, false)
	case updateReq:
		err = s.add(c, m.job, true)
	case cancelReq:
		err = s.cancel(c, m.name)
	case pauseReq:
		err = s.pause(c, m.name)
	case resumeReq:
		err = s.resume(c, m.name)
	case historyReq:
		h, ok := s.hist[m.name]
		if !ok {
			c.ReplyError(req, ErrNoJob)
			return
		}
		c.Reply(req, slices.Clone(h))
		return
	case statusReq:
		c.Reply(req, s.status(c))
		return
	default:
		err = actor.ErrUnhandled
	}
	if err != nil {
		c.ReplyError(req, err)
		return
	}
	c.Reply(req, struct{}{})
}

func (s *scheduler) HandleCast(c *actor.Context, msg any) {
	if m, ok := msg.(runNow); ok {
		s.drainPriority(c)
		if js := s.jobs[m.name]; js != nil {
			s.trigger(c, js, 0)
		}
	}
}

func (s *scheduler) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Timeout:
		switch t := m.Msg.(type) {
		case fire:
			s.drainPriority(c)
			if js := s.jobs[t.name]; js != nil && js.timer == m.Ref {
				s.onFire(c, js)
			}
		case retry:
			s.drainPriority(c)
			if js := s.jobs[t.name]; js != nil {
				if _, ok := js.retries[m.Ref]; ok {
					delete(js.retries, m.Ref)
					s.trigger(c, js, t.attempt)
				}
			}
		case overrun:
			if rs := s.runs[t.id]; rs != nil && rs.deadline == m.Ref {
				s.onOverrun(c, rs)
			}
		}
	case tick:
		s.drainPriority(c)
		if js := s.jobs[m.name]; js != nil && js.gen == m.gen {
			s.trigger(c, js, 0)
		}
	case started:
		rs := s.runs[m.id]
		if rs == nil { // a restart of a run cancelled or killed meanwhile
			supervisor.TerminateChildPid(c, s.runners, m.pid)
			return
		}
		rs.pid = m.pid
		s.byPid[m.pid] = m.id
	case finished:
		if rs := s.runs[m.id]; rs != nil {
			if m.err != nil {
				s.finish(c, rs, Failed, m.err.Error())
			} else {
				s.finish(c, rs, OK, "")
			}
		}
	case runnerExit:
		s.onRunnerExit(c, m)
	case freeze:
		c.Receive(func(m any) bool { _, ok := m.(thaw); return ok }, actor.Infinity)
	}
}

func (s *scheduler) add(c *actor.Context, j Job, replace bool) error {
	j, err := j.check()
	if err != nil {
		return err
	}
	old := s.jobs[j.Name]
	switch {
	case old != nil && !replace:
		return ErrJobExists
	case old == nil && replace:
		return ErrNoJob
	}
	first := j.Every
	if j.At > 0 {
		first = untilNext(time.Now(), j.At)
	}
	js := &jobState{Job: j, retries: map[actor.TimerRef]int{}, st: JobStatus{Name: j.Name}}
	if old != nil {
		// An edit keeps the counters, the pending retries and the pause,
		// and comes no later than the old timer would have.
		js.st, js.retries, js.gen, js.paused = old.st, old.retries, old.gen, old.paused
		left := s.disarm(c, old)
		if old.paused {
			left = old.left
		}
		if left > 0 {
			first = min(left, first)
		}
	}
	s.jobs[j.Name] = js
	if _, ok := s.hist[j.Name]; !ok {
		s.hist[j.Name] = nil
	}
	if js.paused {
		js.left = first
		return nil
	}
	return s.arm(c, js, first)
}

// arm starts a job's timer: its next run after d.
func (s *scheduler) arm(c *actor.Context, js *jobState, d time.Duration) error {
	js.gen++
	ref, err := c.StartTimer(c.Self(), fire{js.Name}, d)
	js.timer = ref
	return err
}

// disarm cancels a job's timers and returns what was left until its next run
// (ReadTimer first: CancelTimer does not say).
func (s *scheduler) disarm(c *actor.Context, js *jobState) time.Duration {
	var left time.Duration
	for _, ref := range []actor.TimerRef{js.timer, js.interval} {
		if d, ok := c.ReadTimer(ref); ok {
			left = d
		}
		c.CancelTimer(ref)
	}
	js.timer, js.interval = actor.TimerRef{}, actor.TimerRef{}
	js.gen++ // ticks already queued are stale now
	return left
}

func (s *scheduler) onFire(c *actor.Context, js *jobState) {
	js.timer = actor.TimerRef{}
	if js.Every > 0 {
		// From now on a SendInterval, which does not drift.
		js.interval, _ = c.SendInterval(c.Self(), tick{js.Name, js.gen}, js.Every)
	} else {
		// The timer is monotonic, the time of day is the wall clock: a
		// clock that was behind could make the next run seem seconds away.
		d := untilNext(time.Now(), js.At)
		if d < time.Minute {
			d = untilNext(time.Now().Add(time.Minute), js.At) + time.Minute
		}
		js.timer, _ = c.StartTimer(c.Self(), fire{js.Name}, d)
	}
	s.trigger(c, js, 0)
}

func (s *scheduler) pause(c *actor.Context, name string) error {
	js := s.jobs[name]
	if js == nil {
		return ErrNoJob
	}
	if !js.paused {
		js.paused, js.left = true, s.disarm(c, js)
	}
	return nil
}

func (s *scheduler) resume(c *actor.Context, name string) error {
	js := s.jobs[name]
	if js == nil {
		return ErrNoJob
	}
	if !js.paused {
		return nil
	}
	js.paused = false
	return s.arm(c, js, js.left)
}

func (s *scheduler) cancel(c *actor.Context, name string) error {
	js := s.jobs[name]
	if js == nil {
		return ErrNoJob
	}
	s.disarm(c, js)
	for ref := range js.retries {
		c.CancelTimer(ref)
	}
	delete(s.jobs, name)
	for _, rs := range s.runs {
		if rs.Job == name {
			s.kill(c, rs)
			s.finish(c, rs, Cancelled, "")
		}
	}
	return nil
}

// trigger starts a run of js, unless it is paused or at its MaxConcurrent.
func (s *scheduler) trigger(c *actor.Context, js *jobState, attempt int) {
	if js.paused || js.st.Running >= js.MaxConcurrent {
		js.st.Skipped++
		return
	}
	s.nextID++
	rs := &runState{Run: Run{s.nextID, js.Name, attempt}, started: time.Now()}
	s.runs[rs.ID] = rs
	js.st.Running++
	js.st.Runs++
	if attempt > 0 {
		js.st.Retried++
	}
	pid, err := supervisor.StartChildArgs(c, s.runners, c.Self(), rs.Run, js.Work)
	if err != nil {
		s.finish(c, rs, Lost, err.Error())
		return
	}
	if s.runs[rs.ID] == rs && rs.pid.IsZero() {
		rs.pid = pid
		s.byPid[pid] = rs.ID
	}
	if js.MaxRun > 0 {
		rs.deadline, _ = c.StartTimer(c.Self(), overrun{rs.ID}, js.MaxRun)
	}
}

// kill stops a run's runner through its supervisor: at once (BrutalKill),
// and without a restart.
func (s *scheduler) kill(c *actor.Context, rs *runState) {
	if !rs.pid.IsZero() {
		supervisor.TerminateChildPid(c, s.runners, rs.pid)
	}
}

func (s *scheduler) onOverrun(c *actor.Context, rs *runState) {
	pid := rs.pid
	s.kill(c, rs)
	s.finish(c, rs, Killed, ErrOverrun.Error())
	c.System().Report(actor.Report{
		Kind: actor.OtherReport, Context: "job_overrun",
		Pid: c.Self(), Name: s.opt.Name, ChildID: rs.Job, ChildPids: []actor.Pid{pid}, Reason: ErrOverrun,
		Text: fmt.Sprintf("cron: job %s run %d (attempt %d) killed after %v", rs.Job, rs.ID, rs.Attempt,
			time.Since(rs.started).Round(time.Millisecond)),
	})
}

func (s *scheduler) onRunnerExit(c *actor.Context, m runnerExit) {
	id, ok := s.byPid[m.pid]
	if !ok {
		return
	}
	delete(s.byPid, m.pid)
	rs := s.runs[id]
	if rs == nil || rs.pid != m.pid {
		return
	}
	why := fmt.Sprint(m.reason)
	if p, ok := m.reason.(actor.Panic); ok {
		why = fmt.Sprint("panic: ", p.Value)
	}
	switch {
	case actor.IsNormal(m.reason) || actor.IsShutdown(m.reason):
		s.finish(c, rs, Lost, why) // it stopped without sending finished
	case m.restart:
		// The same run goes on in a new runner, which says started.
		rs.pid = actor.Pid{}
		s.record(Entry{rs.Run, rs.started, time.Now(), Crashed, why})
		if js := s.jobs[rs.Job]; js != nil {
			js.st.Crashed++
		}
	default:
		s.finish(c, rs, Crashed, why)
	}
}

// finish ends a run: its entry, its counters, and a retry if it failed.
func (s *scheduler) finish(c *actor.Context, rs *runState, o Outcome, why string) {
	delete(s.runs, rs.ID)
	delete(s.byPid, rs.pid)
	c.CancelTimer(rs.deadline)
	s.record(Entry{rs.Run, rs.started, time.Now(), o, why})
	js := s.jobs[rs.Job]
	if js == nil {
		return
	}
	js.st.Running--
	switch o {
	case OK:
		js.st.OK++
	case Failed:
		js.st.Failed++
	case Crashed:
		js.st.Crashed++
	case Killed:
		js.st.Killed++
	}
	if (o == Failed || o == Crashed) && rs.Attempt < js.Retries {
		ref, err := c.StartTimer(c.Self(), retry{js.Name, rs.Attempt + 1}, retryDelay(js.Backoff, rs.Attempt))
		if err == nil {
			js.retries[ref] = rs.Attempt + 1
		}
	}
}

// maxRetryDelay caps the doubling of a job's retry delay.
const maxRetryDelay = time.Hour

// retryDelay is the delay before retry attempt+1: base doubled attempt
// times, capped at maxRetryDelay (base<<attempt overflowed to a negative
// delay, a retry at once, from about the 37th attempt of a 100 ms base).
func retryDelay(base time.Duration, attempt int) time.Duration {
	d := base
	for i := 0; i < attempt && d < maxRetryDelay; i++ {
		d *= 2
	}
	return min(d, maxRetryDelay)
}

func (s *scheduler) record(e Entry) {
	h := append(s.hist[e.Job], e)
	if len(h) > s.opt.HistoryLen {
		h = h[len(h)-s.opt.HistoryLen:]
	}
	s.hist[e.Job] = h
}

func (s *scheduler) status(c *actor.Context) []JobStatus {
	out := make([]JobStatus, 0, len(s.jobs))
	for _, js := range s.jobs {
		st := js.st
		st.Paused = js.paused
		if js.paused {
			st.NextIn = js.left
		} else if d, ok := c.ReadTimer(js.interval); ok {
			st.NextIn = d
		} else if d, ok := c.ReadTimer(js.timer); ok {
			st.NextIn = d
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b JobStatus) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}
