//go:build unix

package chaos

// The worker node: what a child process of the chaos test runs.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/pg"
	"github.com/colonyrt/colony/supervisor"
)

const (
	cookie = "chaos"
	group  = actor.Atom("chaos_workers")
	// crashEvery: a worker crashes (panics) on one request in crashEvery,
	// so its supervisor restarts it while the load runs.
	crashEvery = 211
)

var (
	atomCall  = actor.Atom("call")
	atomReply = actor.Atom("reply")
)

// worker answers a call (a Request, or the tuple {call, From, Tag, N} of
// the message protocol) with N+1, and crashes on one N in crashEvery. It
// joins the group in its Init.
type worker struct {
	actor.ServerBase
	scope *pg.Scope
}

func (w *worker) Init(c *actor.Context) error { return w.scope.Join(c, group, c.Self()) }

func (w *worker) HandleCall(c *actor.Context, req actor.Request) {
	n, ok := req.Msg.(int)
	if !ok {
		c.ReplyError(req, fmt.Errorf("chaos: request %T", req.Msg))
		return
	}
	if n%crashEvery == 0 {
		panic("chaos: planted crash")
	}
	c.Reply(req, n+1)
}

func (w *worker) HandleInfo(c *actor.Context, m any) {
	t, ok := m.(etf.Tuple)
	if !ok || len(t) != 4 || t[0] != atomCall {
		return
	}
	from, ok1 := t[1].(actor.Pid)
	n, ok2 := t[3].(int)
	if !ok1 || !ok2 {
		return
	}
	if n%crashEvery == 0 {
		panic("chaos: planted crash")
	}
	c.Send(from, etf.Tuple{atomReply, t[2], n + 1})
}

// childMain runs a worker node until its standard input ends (the test
// closes it, or dies) or it is killed. It returns the exit status.
func childMain(args []string) int {
	fs := flag.NewFlagSet("chaosnode", flag.ContinueOnError)
	name := fs.String("name", "", "node name")
	seeds := fs.String("seeds", "", "comma-separated seeds")
	port := fs.Int("epmd-port", 0, "epmd port")
	workers := fs.Int("workers", 4, "workers")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	sys, err := actor.Start(actor.Config{Reporter: func(actor.Report) {}}) // planted crashes: no log
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
	}()
	var seedList []actor.Atom
	for _, s := range strings.Split(*seeds, ",") {
		if s != "" {
			seedList = append(seedList, actor.Atom(s))
		}
	}
	n, err := dist.Start(sys, dist.Config{Name: *name, Cookie: cookie, Seeds: seedList, EPMDPort: *port,
		EPMD: dist.EPMDExternal, SeedRetryMin: 20 * time.Millisecond, SeedRetryMax: 300 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	scope, err := pg.Start(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	spec := supervisor.Spec{Strategy: supervisor.OneForOne, Intensity: 100000, Period: time.Second}
	for i := range *workers {
		spec.Children = append(spec.Children, supervisor.ChildSpec{ID: fmt.Sprint("w", i),
			Start: supervisor.ServerStart(func(...any) actor.Server { return &worker{scope: scope} })})
	}
	if _, err := supervisor.Start(sys, spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	return 0
}
