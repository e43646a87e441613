package main

// The observer demo (-observe ADDR): a System kept busy — a message storm
// at a steady rate, a supervision tree whose worker crashes every few
// seconds and is restarted, an actor whose mailbox grows faster than it
// drains — with the observer page served at ADDR, and its metrics at
// ADDR/metrics in Prometheus's text format, until the command is
// interrupted. The metrics come from observer/metrics, the same families
// the Prometheus collector (module observer/prom) exports, so the demo,
// part of the library's module, needs no client_golang
// (docs/dependencies.md).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/observer"
	"github.com/colonyrt/colony/observer/metrics"
	"github.com/colonyrt/colony/supervisor"
)

type crashTick struct{}

// flaky crashes a few seconds after it starts; its supervisor restarts it.
type flaky struct {
	actor.ServerBase
	every time.Duration
	n     *atomic.Int64
}

func (f *flaky) Init(c *actor.Context) error {
	c.SendAfter(c.Self(), crashTick{}, f.every)
	return nil
}

func (f *flaky) HandleInfo(c *actor.Context, msg any) {
	if _, ok := msg.(crashTick); ok {
		panic(fmt.Sprintf("demo crash #%d: the flaky worker gives up", f.n.Add(1)))
	}
}

// slowSink takes 20 ms a message (a Sleep, so it blocks and hands its
// scheduler on); its feeder keeps its mailbox near 200.
func slowSink(c *actor.Context, msg any) { c.Sleep(20 * time.Millisecond) }

// runObserve starts the demo System and serves its observer on ln until
// ctx is done.
func runObserve(ctx context.Context, out io.Writer, ln net.Listener, n int) error {
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys.Shutdown(sctx)
	}()

	// A supervision tree: demo -> {flaky, sinks -> {slow}, pool}.
	var crashes atomic.Int64
	sinks := supervisor.Spec{Name: "sinks", Children: []supervisor.ChildSpec{{
		ID: "slow", Start: func(c *actor.Context, _ ...any) (actor.Pid, error) {
			return c.SpawnLink(actor.ActorFunc(slowSink), actor.Name("slow_sink"))
		},
	}}}
	root, err := supervisor.Start(sys, supervisor.Spec{
		Name: "demo", Intensity: 1000, Period: time.Minute,
		Children: []supervisor.ChildSpec{
			{ID: "flaky", Start: supervisor.ServerStart(func(...any) actor.Server {
				return &flaky{every: 4 * time.Second, n: &crashes}
			}, actor.WithSpawn(actor.Name("flaky")))},
			supervisor.Child("sinks", sinks),
		},
	})
	if err != nil {
		return err
	}

	// The storm: n relays, chains of hops injected at a steady rate.
	var done atomic.Int64
	peers := make([]actor.Pid, n)
	for i := range peers {
		if peers[i], err = sys.Spawn(&relay{peers: &peers, seed: uint32(i), done: &done}); err != nil {
			return err
		}
	}
	driver := time.NewTicker(100 * time.Millisecond)
	defer driver.Stop()

	m := metrics.New(sys)
	defer m.Close()
	mux := http.NewServeMux()
	mux.Handle("/metrics", m)
	mux.Handle("/", observer.Handler(sys, observer.Supervisors(root)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(out, "observer at http://%s/, metrics at http://%s/metrics (%d actors; a crash every 4 s; Ctrl-C to stop)\n", ln.Addr(), ln.Addr(), n+4)

	seed := uint32(1)
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(sctx)
			<-served
			return nil
		case err := <-served:
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		case <-driver.C:
			for i := 0; i < 200; i++ {
				seed = seed*1664525 + 1013904223
				sys.Send(peers[int(seed>>8)%n], hop{20})
			}
			if slow, ok := sys.Whereis("slow_sink"); ok {
				if info, err := sys.Info(slow); err == nil && info.MailboxLen < 200 {
					for i := 0; i < 10; i++ {
						sys.Send(slow, i)
					}
				}
			}
		}
	}
}

// observeMain is -observe: listen on addr and run the demo until an
// interrupt or a termination signal.
func observeMain(out io.Writer, addr string, n int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runObserve(ctx, out, ln, min(max(n, 1), 100_000))
}
