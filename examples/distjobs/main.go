// Command distjobs is a distributed job queue: workers live on several
// nodes (Colony nodes, and Erlang nodes if you like), a dispatcher finds
// them through a process group (package dist/pg, Erlang's pg) and hands
// each job to one; a node killed mid-run loses no job.
//
//	go run ./examples/distjobs -name w1@127.0.0.1 -seeds d@127.0.0.1            # a worker node
//	go run ./examples/distjobs -name w2@127.0.0.1 -seeds d@127.0.0.1            # another
//	go run ./examples/distjobs -name d@127.0.0.1 -workers 0 -submit 20000       # the dispatcher
//
// The wire protocol is plain Erlang terms, so an Erlang process is a worker
// too (README.md): a worker joins the pg group distjobs_workers, takes
// {job, From, ID, N} and answers From with {done, ID, N*N, node()}.
//
// How it keeps serving. The dispatcher tracks every job until its answer
// comes. When a worker's node goes down, pg drops that node's workers and
// the dispatcher sends the jobs they held to other workers at once (it
// watches nodes, Node.MonitorNodes); a job whose answer does not come
// within -timeout is sent again too. So a job may run twice (at least
// once), and the dispatcher keeps the first answer. Worker nodes name the
// dispatcher as a seed (dist.Config.Seeds), so a worker node that restarts
// rejoins by itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/pg"
)

// group is the pg group the workers join (an atom, as Erlang names it).
const group = actor.Atom("distjobs_workers")

var (
	atomJob  = actor.Atom("job")
	atomDone = actor.Atom("done")
)

// work is what a job computes: the same on Go and Erlang workers.
func work(n int) int { return n * n }

// worker answers {job, From, ID, N} with {done, ID, work(N), Node}.
type worker struct {
	node  actor.Atom
	delay time.Duration // time each job takes, to make the example's runs visible
}

func (w *worker) Receive(c *actor.Context, msg any) {
	t, ok := msg.(etf.Tuple)
	if !ok || len(t) != 4 || t[0] != atomJob {
		return
	}
	from, ok1 := t[1].(actor.Pid)
	n, ok2 := t[3].(int)
	if !ok1 || !ok2 {
		return
	}
	if w.delay > 0 {
		c.Sleep(w.delay)
	}
	c.Send(from, etf.Tuple{atomDone, t[2], work(n), w.node})
}

// Messages of the dispatcher.
type (
	submit struct{ ID, N int }
	tick   struct{}
)

// Result is a completed job.
type Result struct {
	ID, N, Value int
	Node         actor.Atom // the node whose worker answered
	Attempts     int        // the times the job was sent
}

// dispatcher hands jobs to the group's workers and tracks them until
// their answers come.
type dispatcher struct {
	scope   *pg.Scope
	node    *dist.Node
	timeout time.Duration
	onDone  func(Result) // runs in the handler: must not block
	stats   *Stats

	pending map[int]*pendingJob
	next    int // round robin over the members
}

type pendingJob struct {
	n        int
	worker   actor.Pid // zero: waiting for a worker
	node     actor.Atom
	sent     time.Time
	attempts int
}

// Counts are the dispatcher's counters.
type Counts struct {
	Submitted, Completed int
	Resent, Duplicates   int
	ByNode               map[actor.Atom]int // completed jobs by the node that ran them
}

// Stats holds the dispatcher's Counts; read them with Snapshot.
type Stats struct {
	mu sync.Mutex
	c  Counts
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.c
	out.ByNode = map[actor.Atom]int{}
	for k, v := range s.c.ByNode {
		out.ByNode[k] = v
	}
	return out
}

func (s *Stats) add(f func(*Counts)) {
	s.mu.Lock()
	f(&s.c)
	s.mu.Unlock()
}

func (d *dispatcher) Init(c *actor.Context) {
	d.node.MonitorNodes(c.Self())
	c.SendInterval(c.Self(), tick{}, d.timeout/4)
}

func (d *dispatcher) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case submit:
		d.stats.add(func(s *Counts) { s.Submitted++ })
		d.pending[m.ID] = &pendingJob{n: m.N}
		d.dispatch(c, m.ID)
	case etf.Tuple:
		d.answer(m)
	case dist.NodeDown:
		// The node's workers are gone: what they held goes elsewhere now,
		// not at the timeout.
		for id, p := range d.pending {
			if p.node == m.Node && !p.worker.IsZero() {
				d.dispatch(c, id)
			}
		}
	case tick:
		now := time.Now()
		for id, p := range d.pending {
			if p.worker.IsZero() || now.Sub(p.sent) > d.timeout {
				d.dispatch(c, id)
			}
		}
	}
}

// dispatch sends job id to the next worker of the group, or leaves it
// waiting (for the next tick) if there is none.
func (d *dispatcher) dispatch(c *actor.Context, id int) {
	p := d.pending[id]
	// Skip the workers of a node that is down: pg drops them when its own
	// monitor of that node's scope fires, which may come after our
	// NodeDown.
	members := slices.DeleteFunc(d.scope.Members(group), func(w actor.Pid) bool {
		rid, ok := w.Remote()
		return ok && !d.node.Connected(rid.Node)
	})
	if len(members) == 0 {
		p.worker, p.node = actor.Pid{}, ""
		return
	}
	w := members[d.next%len(members)]
	d.next++
	if p.attempts > 0 {
		d.stats.add(func(s *Counts) { s.Resent++ })
	}
	p.worker, p.sent = w, time.Now()
	p.node = d.node.Name()
	if rid, ok := w.Remote(); ok {
		p.node = rid.Node
	}
	p.attempts++
	if err := c.Send(w, etf.Tuple{atomJob, c.Self(), id, p.n}); err != nil {
		p.worker = actor.Pid{} // retried at the next tick
	}
}

// answer takes {done, ID, Value, Node}.
func (d *dispatcher) answer(t etf.Tuple) {
	if len(t) != 4 || t[0] != atomDone {
		return
	}
	id, ok1 := t[1].(int)
	v, ok2 := t[2].(int)
	node, _ := t[3].(actor.Atom)
	if !ok1 || !ok2 {
		return
	}
	p := d.pending[id]
	if p == nil {
		d.stats.add(func(s *Counts) { s.Duplicates++ }) // an answer to a job sent twice
		return
	}
	delete(d.pending, id)
	d.stats.add(func(s *Counts) {
		s.Completed++
		if s.ByNode == nil {
			s.ByNode = map[actor.Atom]int{}
		}
		s.ByNode[node]++
	})
	if d.onDone != nil {
		d.onDone(Result{ID: id, N: p.n, Value: v, Node: node, Attempts: p.attempts})
	}
}

// Options configure a node of the example.
type Options struct {
	Name, Cookie string
	Seeds        []actor.Atom
	EPMDPort     int
	Workers      int           // workers to start on this node
	Delay        time.Duration // each job's time on a worker
	Timeout      time.Duration // a job's answer is waited for this long before it is sent again
	Dispatch     bool          // run a dispatcher on this node
	OnDone       func(Result)  // called for each completed job (in the dispatcher's handler)
	Logger       *slog.Logger
}

// App is a running node of the example.
type App struct {
	Sys        *actor.System
	Node       *dist.Node
	Scope      *pg.Scope
	Dispatcher actor.Pid // zero without Dispatch
	Stats      *Stats
}

// Start starts a node: its System, distribution, the pg scope, its
// workers (joined to the group) and, if asked, the dispatcher.
func Start(o Options) (*App, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	sys, err := actor.Start(actor.Config{Logger: actor.SlogLogger(o.Logger)})
	if err != nil {
		return nil, err
	}
	app := &App{Sys: sys, Stats: &Stats{}}
	fail := func(err error) (*App, error) {
		sys.Shutdown(context.Background())
		return nil, err
	}
	app.Node, err = dist.Start(sys, dist.Config{Name: o.Name, Cookie: o.Cookie, Seeds: o.Seeds,
		EPMDPort: o.EPMDPort, Logger: o.Logger, SeedRetryMax: time.Second})
	if err != nil {
		return fail(err)
	}
	if app.Scope, err = pg.Start(app.Node); err != nil {
		return fail(err)
	}
	for range o.Workers {
		pid, err := sys.Spawn(&worker{node: app.Node.Name(), delay: o.Delay})
		if err == nil {
			err = app.Scope.Join(sys, group, pid)
		}
		if err != nil {
			return fail(err)
		}
	}
	if o.Dispatch {
		d := &dispatcher{scope: app.Scope, node: app.Node, timeout: o.Timeout, onDone: o.OnDone,
			stats: app.Stats, pending: map[int]*pendingJob{}}
		if app.Dispatcher, err = sys.Spawn(d, actor.Name("distjobs")); err != nil {
			return fail(err)
		}
	}
	return app, nil
}

// Submit queues job id (computing work(n)) with the dispatcher.
func (a *App) Submit(id, n int) error { return a.Sys.Send(a.Dispatcher, submit{id, n}) }

// Stop shuts the node down.
func (a *App) Stop(ctx context.Context) error { return a.Sys.Shutdown(ctx) }

// run is the command: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("distjobs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "d@127.0.0.1", "the node's name, alive@host")
	cookie := fs.String("cookie", "distjobs", "the cluster's cookie")
	seeds := fs.String("seeds", "", "comma-separated nodes to stay connected to")
	epmdPort := fs.Int("epmd-port", 0, "epmd's port (0: ERL_EPMD_PORT, else 4369)")
	workers := fs.Int("workers", 4, "workers on this node")
	delay := fs.Duration("delay", 10*time.Millisecond, "time each job takes on a worker")
	submitN := fs.Int("submit", 0, "jobs to submit (a dispatcher runs on this node if > 0)")
	rate := fs.Int("rate", 200, "jobs submitted per second")
	timeout := fs.Duration("timeout", 2*time.Second, "a job is sent again if no answer comes within this")
	verbose := fs.Bool("v", false, "log connections")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	var seedList []actor.Atom
	for _, s := range strings.Split(*seeds, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seedList = append(seedList, actor.Atom(s))
		}
	}
	done := make(chan struct{})
	var once sync.Once
	left := *submitN
	var mu sync.Mutex
	app, err := Start(Options{Name: *name, Cookie: *cookie, Seeds: seedList, EPMDPort: *epmdPort,
		Workers: *workers, Delay: *delay, Timeout: *timeout, Dispatch: *submitN > 0, Logger: logger,
		OnDone: func(r Result) {
			if r.Value != work(r.N) {
				fmt.Fprintf(stderr, "job %d: %d, want %d\n", r.ID, r.Value, work(r.N))
			}
			mu.Lock()
			left--
			if left == 0 {
				once.Do(func() { close(done) })
			}
			mu.Unlock()
		}})
	if err != nil {
		fmt.Fprintln(stderr, "distjobs:", err)
		return 1
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		app.Stop(ctx)
	}()
	fmt.Fprintf(stdout, "distjobs: node %s up, %d workers\n", app.Node.Name(), *workers)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	if *submitN <= 0 {
		<-sig
		return 0
	}
	go func() { // the feeder: -rate jobs a second
		every := time.Second / time.Duration(max(*rate, 1))
		t := time.NewTicker(every)
		defer t.Stop()
		for id := range *submitN {
			select {
			case <-t.C:
			case <-done:
				return
			}
			if err := app.Submit(id, id%1000); err != nil {
				return
			}
		}
	}()
	progress := time.NewTicker(time.Second)
	defer progress.Stop()
	for {
		select {
		case <-done:
			printStats(stdout, app)
			return 0
		case <-progress.C:
			printStats(stdout, app)
		case <-sig:
			printStats(stdout, app)
			return 1
		}
	}
}

func printStats(w io.Writer, app *App) {
	s := app.Stats.Snapshot()
	var nodes []string
	for n, k := range s.ByNode {
		nodes = append(nodes, fmt.Sprintf("%s=%d", n, k))
	}
	sort.Strings(nodes)
	fmt.Fprintf(w, "submitted %d, completed %d, resent %d, duplicates %d, workers %d; by node: %s\n",
		s.Submitted, s.Completed, s.Resent, s.Duplicates, len(app.Scope.Members(group)), strings.Join(nodes, " "))
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
