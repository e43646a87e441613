package pool_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/pool"
	"github.com/colonyrt/colony/supervisor"
)

// conn stands for a worker that owns something costly (a connection):
// it answers each call with its number of calls served.
type conn struct {
	actor.ServerBase
	served int
}

func (w *conn) HandleCall(c *actor.Context, req actor.Request) {
	w.served++
	c.Reply(req, w.served)
}

func startConn(c *actor.Context) (actor.Pid, error) { return actor.SpawnServer(c, &conn{}) }

// Check a worker out, use it, check it in.
func ExamplePool() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	p, err := pool.Start(sys, startConn, pool.Size(2))
	if err != nil {
		panic(err)
	}
	w, _ := p.Checkout(sys, time.Second)
	n, _ := actor.Call[int](sys, w, "query", time.Second)
	fmt.Println("served:", n)
	st, _ := p.Status(sys)
	fmt.Printf("idle %d, busy %d\n", st.Idle, st.Busy)
	p.Checkin(sys, w)
	st, _ = p.Status(sys)
	fmt.Printf("idle %d, busy %d\n", st.Idle, st.Busy)
	// Output:
	// served: 1
	// idle 1, busy 1
	// idle 2, busy 0
}

// Transaction checks the worker in whatever f does.
func ExamplePool_Transaction() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	p, _ := pool.Start(sys, startConn, pool.Size(1))
	for range 3 {
		p.Transaction(sys, time.Second, func(w actor.Pid) error {
			n, err := actor.Call[int](sys, w, "query", time.Second)
			fmt.Println("served:", n)
			return err
		})
	}
	// Output:
	// served: 1
	// served: 2
	// served: 3
}

// Past Size, MaxOverflow more workers start for the busy spell; then the
// pool shrinks back. Past those, a checkout that does not wait fails.
func ExampleMaxOverflow() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	p, _ := pool.Start(sys, startConn, pool.Size(1), pool.MaxOverflow(1))
	a, _ := p.TryCheckout(sys)
	b, _ := p.TryCheckout(sys)
	_, err := p.TryCheckout(sys)
	fmt.Println(errors.Is(err, pool.ErrFull))
	st, _ := p.Status(sys)
	fmt.Println("overflow:", st.Overflow)
	p.Checkin(sys, a)
	p.Checkin(sys, b)
	st, _ = p.Status(sys)
	fmt.Println("overflow:", st.Overflow, "idle:", st.Idle)
	// Output:
	// true
	// overflow: 1
	// overflow: 0 idle: 1
}

// A Pool in a supervision tree, by name.
func ExamplePool_ChildSpec() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	p, _ := pool.New(startConn, pool.Size(3), pool.Name("db.pool"))
	supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{p.ChildSpec("db")}})
	pid, _ := sys.Whereis("db.pool")
	fmt.Println(pid == p.Pid())
	st, _ := p.Status(sys)
	fmt.Println("idle:", st.Idle)
	// Output:
	// true
	// idle: 3
}

// name is a worker that answers with its index.
type name struct {
	actor.ServerBase
	i int
}

func (w *name) HandleCall(c *actor.Context, req actor.Request) { c.Reply(req, w.i) }

// A Router hands each call to its next worker, which answers it.
func ExampleRouter() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	next := 0
	r, _ := pool.StartRouter(sys, func(c *actor.Context) (actor.Pid, error) {
		next++ // StartFuncs run one at a time, in the router's workers' supervisor
		return actor.SpawnServer(c, &name{i: next})
	}, pool.Size(3))
	for range 4 {
		i, _ := pool.RouteCall[int](sys, r, "who", time.Second)
		fmt.Print(i, " ")
	}
	fmt.Println()
	// Output: 1 2 3 1
}

// LeastLoaded passes over a worker with calls still unanswered.
func ExampleLeastLoaded() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	next := 0
	r, _ := pool.StartRouter(sys, func(c *actor.Context) (actor.Pid, error) {
		next++
		return actor.SpawnServer(c, &name{i: next})
	}, pool.Size(2), pool.LeastLoaded())
	for range 3 {
		i, _ := pool.RouteCall[int](sys, r, "who", time.Second)
		fmt.Print(i, " ") // each answered at once: the load stays even
	}
	fmt.Println()
	// Output: 1 2 1
}
