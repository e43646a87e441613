// Command jobqueue is a small in-memory job queue built on Colony.
//
// A rest_for_one supervisor owns the dispatcher, a gen_server registered by
// name, then a one_for_one pool of workers. Workers join a process group; the
// dispatcher hands each job to an idle member, monitoring it: a job whose
// worker crashes is retried after a SendAfter backoff, up to maxAttempts. A
// deadline timer fails a late job; a job waiting for a retry can be cancelled
// (CancelTimer). Callers wait for a Result with a second Call, or from an
// actor by being notified and taking it with a selective Receive.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

const (
	dispatcherName = "jobqueue.dispatcher"
	workerGroup    = "jobqueue.workers"
	maxAttempts    = 3
	backoff        = 10 * time.Millisecond // doubled after each failed attempt
	slowWork       = 200 * time.Millisecond
	callTimeout    = time.Second
)

// Kind says what a job does when a worker runs it (to exercise failures).
type Kind int

const (
	Square      Kind = iota // the result is N*N
	PanicOnce               // the worker panics on the first attempt only
	AlwaysPanic             // the worker panics on every attempt
	Slow                    // takes slowWork: fails if its deadline is shorter
)

// State is a job's state; Done, Failed and Cancelled are final.
type State int

const (
	Queued State = iota
	Running
	Retrying // waiting for its backoff timer
	Done
	Failed
	Cancelled
)

func (s State) String() string {
	return [...]string{"queued", "running", "retrying", "done", "failed", "cancelled"}[s]
}

// Job is what a client submits. Notify, if set, receives the final Result.
type Job struct {
	Kind     Kind
	N        int
	Deadline time.Duration // 0: none
	Notify   actor.Pid
}

// Result is a job's state; once final it never changes.
type Result struct {
	ID       uint64
	State    State
	Value    int
	Err      string
	Attempts int
}

var errUnknownJob = errors.New("jobqueue: unknown job")

// Calls to the dispatcher (see call).
type (
	submit Job
	ask    struct {
		op string
		id uint64
	}
)

// Messages: a worker's casts to the dispatcher, the dispatcher's timers, and
// a job attempt handed to a worker.
type (
	workerUp struct{}
	done     struct {
		id     uint64
		worker actor.Pid
		value  int
	}
	retry  uint64
	expire uint64
	run    struct {
		id         uint64
		attempt, n int
		kind       Kind
		from       actor.Pid
	}
)

type job struct {
	Job
	res     Result
	worker  actor.Pid // while Running
	mon     actor.Ref
	retryT  actor.TimerRef
	expireT actor.TimerRef
	waiters []actor.Request
}

func (j *job) final() bool { return j.res.State > Retrying }

type dispatcher struct {
	actor.ServerBase
	next  uint64
	jobs  map[uint64]*job
	queue []uint64             // Queued jobs, oldest first
	busy  map[actor.Pid]uint64 // worker -> the job it runs
}

func newDispatcher(...any) actor.Server {
	return &dispatcher{jobs: map[uint64]*job{}, busy: map[actor.Pid]uint64{}}
}

func (d *dispatcher) HandleCall(c *actor.Context, req actor.Request) {
	if m, ok := req.Msg.(submit); ok {
		d.next++
		j := &job{Job: Job(m), res: Result{ID: d.next, State: Queued}}
		d.jobs[d.next] = j
		if m.Deadline > 0 {
			j.expireT, _ = c.SendAfter(c.Self(), expire(d.next), m.Deadline)
		}
		d.queue = append(d.queue, d.next)
		c.Reply(req, d.next)
		d.dispatch(c)
		return
	}
	q, ok := req.Msg.(ask)
	if !ok {
		d.ServerBase.HandleCall(c, req) // ErrUnhandled
		return
	}
	j := d.jobs[q.id]
	if j == nil {
		c.ReplyError(req, errUnknownJob)
		return
	}
	switch q.op {
	case "wait":
		if !j.final() {
			j.waiters = append(j.waiters, req) // answered by finish
			return
		}
		c.Reply(req, j.res)
	case "status":
		c.Reply(req, j.res)
	case "cancel":
		ok := j.res.State == Queued || j.res.State == Retrying
		if ok {
			d.finish(c, j, Cancelled, "cancelled")
		}
		c.Reply(req, ok)
	}
}

func (d *dispatcher) HandleCast(c *actor.Context, msg any) {
	if m, ok := msg.(done); ok {
		d.release(c, m.worker)
		if j := d.jobs[m.id]; j != nil && !j.final() && j.worker == m.worker {
			j.res.Value = m.value
			d.finish(c, j, Done, "")
		}
	}
	d.dispatch(c) // done or workerUp: a worker is idle
}

func (d *dispatcher) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Down: // a worker died: crashed mid-job, or before it got one
		id, ok := d.busy[m.Pid]
		delete(d.busy, m.Pid)
		j := d.jobs[id]
		if !ok || j.final() || j.worker != m.Pid {
			break
		}
		j.worker = actor.Pid{}
		if m.Reason == actor.NoProc { // dead before the job reached it
			j.res.Attempts--
		}
		if j.res.Attempts >= maxAttempts {
			d.finish(c, j, Failed, fmt.Sprint(m.Reason))
			break
		}
		j.res.State = Retrying
		j.retryT, _ = c.SendAfter(c.Self(), retry(id), backoff<<max(j.res.Attempts-1, 0))
	case retry:
		if j := d.jobs[uint64(m)]; j.res.State == Retrying {
			j.res.State = Queued
			d.queue = append(d.queue, uint64(m))
		}
	case expire:
		if j := d.jobs[uint64(m)]; !j.final() {
			d.finish(c, j, Failed, "deadline exceeded")
		}
	}
	d.dispatch(c)
}

// dispatch hands queued jobs to idle workers: group members running nothing.
func (d *dispatcher) dispatch(c *actor.Context) {
	for _, w := range c.System().GroupMembers(workerGroup) {
		for len(d.queue) > 0 && d.jobs[d.queue[0]].res.State != Queued {
			d.queue = d.queue[1:] // cancelled or expired while queued
		}
		if len(d.queue) == 0 {
			return
		}
		if _, busy := d.busy[w]; busy {
			continue
		}
		j := d.jobs[d.queue[0]]
		d.queue = d.queue[1:]
		mon, err := c.Monitor(w) // a Down for the attempt, even if w is dead now
		if err != nil {
			c.Stop(err)
			return
		}
		d.busy[w] = j.res.ID
		j.worker, j.mon = w, mon
		j.res.State = Running
		j.res.Attempts++
		c.Send(w, run{j.res.ID, j.res.Attempts, j.N, j.Kind, c.Self()})
	}
}

// release marks worker w idle and drops its monitor (and a Down already queued).
func (d *dispatcher) release(c *actor.Context, w actor.Pid) {
	if id, ok := d.busy[w]; ok {
		c.Demonitor(d.jobs[id].mon, true)
		delete(d.busy, w)
	}
}

// finish gives j its final state, once, and answers everyone waiting for it.
// A Running job's worker stays busy until it reports done or dies.
func (d *dispatcher) finish(c *actor.Context, j *job, s State, why string) {
	c.CancelTimer(j.retryT)
	c.CancelTimer(j.expireT)
	j.res.State, j.res.Err = s, why
	for _, req := range j.waiters {
		c.Reply(req, j.res)
	}
	j.waiters = nil
	if !j.Notify.IsZero() {
		c.Send(j.Notify, j.res)
	}
}

// worker runs one job at a time. It joins the group and announces itself.
type worker struct{}

func (worker) Init(c *actor.Context) {
	sys := c.System()
	if err := sys.JoinGroup(workerGroup, c.Self()); err != nil {
		c.Stop(err)
		return
	}
	if d, ok := sys.Whereis(dispatcherName); ok {
		actor.Cast(c, d, workerUp{})
	}
}

func (worker) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case run:
		switch {
		case m.kind == AlwaysPanic, m.kind == PanicOnce && m.attempt == 1:
			panic(fmt.Sprintf("job %d attempt %d: boom", m.id, m.attempt))
		case m.kind == Slow: // no sleeping in a handler: finish it later
			m.kind = Square
			c.SendAfter(c.Self(), m, slowWork)
			return
		}
		actor.Cast(c, m.from, done{m.id, c.Self(), m.n * m.n})
	}
}

func startWorker(c *actor.Context, _ ...any) (actor.Pid, error) {
	return c.SpawnLink(worker{})
}

// call calls the dispatcher, found by name (a restart changes its pid):
// submit(job) answers the job id; ask{"wait", id} the job's final Result,
// ask{"status", id} its Result now, ask{"cancel", id} whether it was
// cancelled (only a job queued or waiting for a retry can be).
func call[T any](sys *actor.System, c actor.Caller, req any) (T, error) {
	d, ok := sys.Whereis(dispatcherName)
	if !ok {
		var zero T
		return zero, actor.ErrNotRegistered
	}
	return actor.Call[T](c, d, req, callTimeout)
}

// start starts a System and the queue's tree with n workers.
func start(n int, hooks *supervisor.Hooks) (*actor.System, error) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		return nil, err
	}
	pool := supervisor.Spec{Intensity: 1000, Period: time.Second, Hooks: hooks}
	for i := range n {
		pool.Children = append(pool.Children, supervisor.ChildSpec{
			ID: fmt.Sprint("worker", i), Start: startWorker, Shutdown: supervisor.BrutalKill,
		})
	}
	_, err = supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.RestForOne, // a new dispatcher gets new workers
		Children: []supervisor.ChildSpec{
			{ID: "dispatcher", Start: supervisor.ServerStart(newDispatcher,
				actor.WithSpawn(actor.Name(dispatcherName)))},
			supervisor.Child("workers", pool),
		},
	})
	if err != nil {
		sys.Shutdown(context.Background())
		return nil, err
	}
	return sys, nil
}

// demo submits one job of each kind and prints how each ended.
func demo(w io.Writer) error {
	sys, err := start(4, nil)
	if err != nil {
		return err
	}
	defer sys.Shutdown(context.Background())
	jobs := []Job{{Kind: Square, N: 7}, {Kind: PanicOnce, N: 3}, {Kind: AlwaysPanic},
		{Kind: Slow, N: 2, Deadline: 50 * time.Millisecond}, {Kind: Slow, N: 5}}
	for _, j := range jobs {
		id, err := call[uint64](sys, sys, submit(j))
		if err != nil {
			return err
		}
		r, err := call[Result](sys, sys, ask{"wait", id})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "job %d: %v value=%d attempts=%d %s\n", r.ID, r.State, r.Value, r.Attempts, r.Err)
	}
	return nil
}

func main() {
	if err := demo(os.Stdout); err != nil {
		log.Fatal(err)
	}
}
