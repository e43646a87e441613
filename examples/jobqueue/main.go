// Command jobqueue is a small in-memory job queue built on Colony.
//
// A rest_for_one supervisor owns the dispatcher, a gen_server registered by
// name, then a pool.Pool of workers. The dispatcher runs each attempt of a
// job in a runner, a short-lived actor, which checks a worker
// out of the pool (waiting in its FIFO while every worker is busy), calls
// it with the job and reports the outcome: a job whose worker crashes is
// retried after a backoff (backoff.Backoff, armed with SendAfter), up to
// maxAttempts. A deadline timer fails a late job; a job queued or waiting
// for a retry can be cancelled (CancelTimer). Callers wait for a Result
// with a second Call, or from an actor by being notified and taking it
// with a selective Receive.
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
	"github.com/colonyrt/colony/backoff"
	"github.com/colonyrt/colony/pool"
	"github.com/colonyrt/colony/supervisor"
)

const (
	dispatcherName = "jobqueue.dispatcher"
	maxAttempts    = 3
	retryMin       = 10 * time.Millisecond // doubled after each failed attempt
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

// Messages: a runner's call and cast to the dispatcher, the dispatcher's
// timers, and a job attempt sent to a worker (a call: its reply is the
// value).
type (
	begin    struct{ id uint64 } // the runner has a worker: may the attempt begin?
	finished struct {            // the attempt's outcome
		id    uint64
		ran   bool // begun: the worker was called
		value int
		err   error
	}
	retry  uint64
	expire uint64
	run    struct {
		id         uint64
		attempt, n int
		kind       Kind
	}
)

type job struct {
	Job
	res     Result
	backoff *backoff.Backoff
	retryT  actor.TimerRef
	expireT actor.TimerRef
	waiters []actor.Request
}

func (j *job) final() bool { return j.res.State > Retrying }

type dispatcher struct {
	actor.ServerBase
	pool *pool.Pool
	next uint64
	jobs map[uint64]*job
}

func (d *dispatcher) HandleCall(c *actor.Context, req actor.Request) {
	if m, ok := req.Msg.(submit); ok {
		d.next++
		j := &job{Job: Job(m), res: Result{ID: d.next, State: Queued}}
		j.backoff, _ = backoff.New(retryMin, retryMin<<maxAttempts) // constant, valid bounds
		d.jobs[d.next] = j
		if m.Deadline > 0 {
			j.expireT, _ = c.SendAfter(c.Self(), expire(d.next), m.Deadline)
		}
		c.Reply(req, d.next)
		d.runAttempt(c, j)
		return
	}
	if m, ok := req.Msg.(begin); ok { // only a Queued job runs: not one cancelled meanwhile
		j := d.jobs[m.id]
		ok := j.res.State == Queued
		if ok {
			j.res.State = Running
			j.res.Attempts++
		}
		c.Reply(req, ok)
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
		if ok { // a runner waiting for a worker is told so by begin
			d.finish(c, j, Cancelled, "cancelled")
		}
		c.Reply(req, ok)
	}
}

func (d *dispatcher) HandleCast(c *actor.Context, msg any) {
	if m, ok := msg.(finished); ok {
		j := d.jobs[m.id]
		var exit *actor.CallExitError
		switch {
		case j.final(): // expired meanwhile: the result comes too late
		case m.ran && m.err == nil:
			j.res.Value = m.value
			d.finish(c, j, Done, "")
		case m.ran && errors.As(m.err, &exit) && j.res.Attempts >= maxAttempts:
			d.finish(c, j, Failed, fmt.Sprint(exit.Reason))
		case m.ran && exit == nil: // no attempt: the worker was gone before the call
			j.res.Attempts--
			fallthrough
		default: // the worker crashed, or the runner got none (the pool restarts)
			d.retryLater(c, j)
		}
	}
}

func (d *dispatcher) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case retry:
		if j := d.jobs[uint64(m)]; j.res.State == Retrying {
			j.res.State = Queued
			d.runAttempt(c, j)
		}
	case expire:
		if j := d.jobs[uint64(m)]; !j.final() {
			d.finish(c, j, Failed, "deadline exceeded")
		}
	}
}

// runAttempt starts a runner for j's next attempt.
func (d *dispatcher) runAttempt(c *actor.Context, j *job) {
	r := runner{pool: d.pool, dispatcher: c.Self(),
		run: run{id: j.res.ID, attempt: j.res.Attempts + 1, n: j.N, kind: j.Kind}}
	pid, err := c.Spawn(r)
	if err != nil {
		d.finish(c, j, Failed, err.Error())
		return
	}
	c.Send(pid, r.run)
}

// retryLater waits j's backoff, then queues it again.
func (d *dispatcher) retryLater(c *actor.Context, j *job) {
	j.res.State = Retrying
	j.retryT, _ = c.SendAfter(c.Self(), retry(j.res.ID), j.backoff.Next())
}

// finish gives j its final state, once, and answers everyone waiting for it.
// A Running job's runner goes on until its worker answers or dies.
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

// runner runs one attempt: it checks a worker out (Transaction checks it
// in again, and the pool takes it back if the runner dies), asks the
// dispatcher whether the job may begin (it may have been cancelled or
// have expired meanwhile), calls the worker and reports the outcome,
// whatever it is, so the dispatcher needs no monitor of it.
type runner struct {
	pool       *pool.Pool
	dispatcher actor.Pid
	run        run
}

func (r runner) Receive(c *actor.Context, _ any) {
	err := r.pool.Transaction(c, actor.Infinity, func(w actor.Pid) error {
		if ok, err := actor.Call[bool](c, r.dispatcher, begin{r.run.id}, callTimeout); !ok || err != nil {
			return nil // cancelled (or expired) while it waited for a worker
		}
		v, err := actor.Call[int](c, w, r.run, actor.Infinity)
		actor.Cast(c, r.dispatcher, finished{r.run.id, true, v, err})
		return nil
	})
	if err != nil { // no worker: the pool is gone (restarting)
		actor.Cast(c, r.dispatcher, finished{id: r.run.id, err: err})
	}
	c.Stop(actor.Normal)
}

// worker runs one job at a time: a call whose reply is the job's value.
type worker struct{}

func (worker) Receive(c *actor.Context, msg any) {
	if m, ok := msg.(actor.Request); ok {
		r := m.Msg.(run)
		switch {
		case r.kind == AlwaysPanic, r.kind == PanicOnce && r.attempt == 1:
			panic(fmt.Sprintf("job %d attempt %d: boom", r.id, r.attempt))
		case r.kind == Slow: // no sleeping in a handler: answer it later
			r.kind = Square
			m.Msg = r
			c.SendAfter(c.Self(), m, slowWork)
			return
		}
		c.Reply(m, r.n*r.n)
	}
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

// start starts a System and the queue's tree with n workers; hooks
// observe the workers' supervisor.
func start(n int, hooks *supervisor.Hooks) (*actor.System, error) {
	workers, err := pool.New(func(c *actor.Context) (actor.Pid, error) { return c.SpawnLink(worker{}) },
		pool.Size(n), pool.Hooks(hooks))
	if err != nil {
		return nil, err
	}
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		return nil, err
	}
	_, err = supervisor.Start(sys, supervisor.Spec{
		Strategy: supervisor.RestForOne, // a new dispatcher gets new workers
		Children: []supervisor.ChildSpec{
			{ID: "dispatcher", Start: supervisor.ServerStart(func(...any) actor.Server {
				return &dispatcher{pool: workers, jobs: map[uint64]*job{}}
			}, actor.WithSpawn(actor.Name(dispatcherName)))},
			workers.ChildSpec("workers"),
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
