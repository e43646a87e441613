// Command distecho is a Colony node that Erlang nodes can talk to: a named
// distribution node with an echo server registered as "echo".
//
// The echo server answers {From, Msg} with {echo, EchoPid, Msg} sent to
// From, so a caller learns its pid and can send to it directly too; it
// logs anything else it receives. See README.md for an erl session.
//
//	go run ./examples/distecho -name colony@127.0.0.1 -cookie c
//
// The node registers with the epmd running on the machine; if none runs it
// starts one (`epmd -daemon`) as erl does, or, where Erlang is not
// installed, serves an EPMD-compatible registrar itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// echo is the echo server.
type echo struct{ log *slog.Logger }

func (e *echo) Receive(c *actor.Context, msg any) {
	if t, ok := msg.(etf.Tuple); ok && len(t) == 2 {
		if from, ok := t[0].(actor.Pid); ok {
			if err := c.Send(from, etf.Tuple{actor.Atom("echo"), c.Self(), t[1]}); err != nil {
				e.log.Warn("echo: reply failed", "to", from, "err", err)
			}
			return
		}
	}
	e.log.Info("echo: got a message that is not {From, Msg}", "msg", fmt.Sprintf("%v", msg))
}

// start starts a System, makes it a node with cfg and spawns the echo
// server; the caller shuts the System down.
func start(cfg dist.Config, logger *slog.Logger) (*actor.System, *dist.Node, error) {
	sys, err := actor.Start(actor.Config{Logger: actor.SlogLogger(logger)})
	if err != nil {
		return nil, nil, err
	}
	cfg.Logger = logger
	n, err := dist.Start(sys, cfg)
	if err == nil {
		_, err = sys.Spawn(&echo{log: logger}, actor.Name("echo"))
	}
	if err != nil {
		sys.Shutdown(context.Background())
		return nil, nil, err
	}
	return sys, n, nil
}

func main() {
	name := flag.String("name", "colony@127.0.0.1", "the node's name, alive@host")
	cookie := flag.String("cookie", "c", "the cluster's cookie (erl's -setcookie)")
	epmdPort := flag.Int("epmd-port", 0, "epmd's port (0: ERL_EPMD_PORT, else 4369)")
	tick := flag.Duration("ticktime", 0, "net_ticktime (0: 60s)")
	hidden := flag.Bool("hidden", false, "a hidden node")
	verbose := flag.Bool("v", false, "log connections and other events at debug level")
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	sys, n, err := start(dist.Config{Name: *name, Cookie: *cookie, EPMDPort: *epmdPort, TickTime: *tick, Hidden: *hidden}, logger)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("node %s is up (listening on %s). From Erlang:\n", n.Name(), n.Addr())
	fmt.Printf("  erl -name x@127.0.0.1 -setcookie %s\n", *cookie)
	fmt.Printf("  > net_adm:ping('%s').\n", n.Name())
	fmt.Printf("  > {echo, '%s'} ! {self(), hello}, flush().\n", n.Name())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
}
