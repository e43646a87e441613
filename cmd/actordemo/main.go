// Command actordemo shows Colony at work on its own: it spawns a large
// number of actors, runs a message storm through them, makes calls that
// block inside handlers, kills actors mid-flight, and prints the figures.
// Other scenarios (a supervision tree under random kills, a TCP echo
// server) run after it when their packages are present.
//
//	go run ./cmd/actordemo
//
// With -observe ADDR it runs none of that: it keeps a System busy (a
// message storm, a supervised worker that crashes every few seconds, a
// mailbox that grows) and serves the observer page at ADDR until
// interrupted.
//
//	go run ./cmd/actordemo -observe 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/actor"
)

// scenarios registered by the other files of this command.
var scenarios []struct {
	name string
	run  func(io.Writer) error
}

func register(name string, run func(io.Writer) error) {
	scenarios = append(scenarios, struct {
		name string
		run  func(io.Writer) error
	}{name, run})
}

func main() {
	n := flag.Int("actors", 200_000, "actors to spawn for the storm")
	msgs := flag.Int("messages", 2_000_000, "messages in the storm")
	observeAddr := flag.String("observe", "", "serve the observer page at this address (e.g. 127.0.0.1:8080) over a busy System until interrupted, instead of the scenarios")
	flag.Parse()
	out := os.Stdout
	if *observeAddr != "" {
		if err := observeMain(out, *observeAddr, *n); err != nil {
			fmt.Fprintln(out, "observe:", err)
			os.Exit(1)
		}
		return
	}
	if err := storm(out, *n, *msgs); err != nil {
		fmt.Fprintln(out, "storm:", err)
		os.Exit(1)
	}
	for _, s := range scenarios {
		fmt.Fprintf(out, "\n== %s\n", s.name)
		if err := s.run(out); err != nil {
			fmt.Fprintf(out, "%s: %v\n", s.name, err)
			os.Exit(1)
		}
	}
	fmt.Fprintln(out, "\nall scenarios done")
}

type hop struct{ left int }

// relay forwards a hop to a random peer until its count runs out.
type relay struct {
	peers *[]actor.Pid
	seed  uint32
	done  *atomic.Int64
}

func (r *relay) Receive(c *actor.Context, m any) {
	switch v := m.(type) {
	case hop:
		if v.left == 0 {
			r.done.Add(1)
			return
		}
		r.seed = r.seed*1664525 + 1013904223
		ps := *r.peers
		c.Send(ps[int(r.seed>>8)%len(ps)], hop{v.left - 1})
	case actor.Request:
		c.Reply(v, c.MessagesHandled())
	}
}

func storm(w io.Writer, n, msgs int) error {
	ms := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	before := ms()
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Colony demo: %d schedulers (GOMAXPROCS %d)\n", sys.Stats().Schedulers[0].ID+len(sys.Stats().Schedulers), runtime.GOMAXPROCS(0))

	// 1. Spawn a large number of actors.
	var done atomic.Int64
	peers := make([]actor.Pid, n)
	t0 := time.Now()
	for i := range peers {
		pid, err := sys.Spawn(&relay{peers: &peers, seed: uint32(i), done: &done})
		if err != nil {
			return err
		}
		peers[i] = pid
	}
	spawnT := time.Since(t0)
	idle := ms()
	fmt.Fprintf(w, "spawned %d actors in %v (%.0f ns each); idle: %d bytes per actor, %d goroutines in all\n",
		n, spawnT.Round(time.Millisecond), float64(spawnT.Nanoseconds())/float64(n), (idle-before)/uint64(n), runtime.NumGoroutine())

	// 2. A message storm: 1,000 chains of hops between random actors.
	chains := 1000
	t0 = time.Now()
	for i := 0; i < chains; i++ {
		sys.Send(peers[i*(n/chains)], hop{msgs / chains})
	}
	for done.Load() < int64(chains) {
		time.Sleep(time.Millisecond)
	}
	el := time.Since(t0)
	fmt.Fprintf(w, "message storm: %d messages through %d actors in %v (%.0f ns/message, %.1f M msg/s)\n",
		msgs, n, el.Round(time.Millisecond), float64(el.Nanoseconds())/float64(msgs), float64(msgs)/el.Seconds()/1e6)

	// 3. Calls that block inside handlers: 1,000 callers each call a peer.
	var answered atomic.Int64
	t0 = time.Now()
	for i := 0; i < 1000; i++ {
		target := peers[i]
		c, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
			if _, err := c.Call(target, "count?", time.Second); err == nil {
				answered.Add(1)
			}
			c.Stop(actor.Normal)
		}))
		sys.Send(c, "go")
	}
	for answered.Load() < 1000 && time.Since(t0) < 10*time.Second {
		time.Sleep(time.Millisecond)
	}
	fmt.Fprintf(w, "1000 blocking calls from inside handlers answered in %v\n", time.Since(t0).Round(time.Microsecond))

	// 4. Kill 1% of the actors; monitors see each death exactly once.
	var downs atomic.Int64
	watcher, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch v := m.(type) {
		case []actor.Pid:
			for _, p := range v {
				c.Monitor(p)
			}
		case actor.Down:
			downs.Add(1)
		}
	}))
	victims := peers[:n/100]
	sys.Send(watcher, victims)
	for _, p := range victims {
		sys.Exit(p, actor.Kill)
	}
	for downs.Load() < int64(len(victims)) && time.Since(t0) < 10*time.Second {
		time.Sleep(time.Millisecond)
	}
	st := sys.Stats()
	fmt.Fprintf(w, "killed %d actors: %d Down messages; live now %d\n", len(victims), downs.Load(), st.Live)
	for _, s := range st.Schedulers {
		fmt.Fprintf(w, "  scheduler %d: %d activations, %d idle parks, %d steals, %d hand-offs\n",
			s.ID, s.Activations, s.Parks, s.Steals, s.Handoffs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t0 = time.Now()
	if err := sys.Shutdown(ctx); err != nil {
		return err
	}
	fmt.Fprintf(w, "shutdown of %d actors in %v\n", st.Live, time.Since(t0).Round(time.Millisecond))
	if downs.Load() != int64(len(victims)) {
		return fmt.Errorf("%d Down messages for %d kills", downs.Load(), len(victims))
	}
	return nil
}
