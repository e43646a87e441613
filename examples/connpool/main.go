// Command connpool is a client-side connection pool built on Colony: N
// connections to an external line-protocol TCP service (one reply line per
// request line), shared by many callers, the OTP way.
//
// A rest_for_one supervisor owns the manager, a gen_server under a
// registered name, then a one_for_one supervisor of connection workers. Each
// worker is a gen_server that says hello to the manager (which monitors it),
// dials the upstream with netio.Dial from its HandleContinue, and serves one
// request at a time on its connection in active-once mode.
//
// Callers use two protocols, both plain calls with a timeout or a
// context.Context:
//
//   - Routed (Pool.Do, Pool.Call): the manager keeps the caller's Request
//     until a worker is idle and hands it over; the worker writes the line
//     and answers the caller itself (gen_server:reply from another process).
//     A worker that dies mid-request makes the manager answer for it (the
//     caller monitors only the manager). A caller that gave up (timeout,
//     cancelled ctx) is seen with Waiting and its request is never sent.
//   - Checkout (Pool.Checkout, Lease.Exec, Pool.Checkin): a connection for
//     the caller's sole use, as poolboy's checkout. The manager monitors an
//     actor holder and takes the lease back at its death; a lease timeout
//     (StartTimer) bounds a holder from plain Go code, which has no pid.
//
// A failed request (connection lost, no reply within RequestTimeout, a line
// nobody asked for) is answered with an error and never retried, since the
// upstream may have acted on it; the connection is dropped (a late reply would
// be read as the next request's) and dialled again with exponential backoff
// and jitter (StartTimer). Consecutive failures, dials included, open a
// circuit breaker in the manager: calls then fail at once with
// ErrCircuitOpen, and after OpenFor one probe request is let through; its
// success closes the breaker, any failure opens it again.
//
// `go run ./examples/connpool` runs a short demo against an in-process
// upstream that it stops and restarts on a new port.
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
)

func demo(out io.Writer) error {
	up, err := StartUpstream("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer up.Stop()
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		return err
	}
	defer sys.Shutdown(context.Background())
	pool, _, err := Start(sys, Options{Addr: up.Addr(), Size: 3, Threshold: 3,
		OpenFor: 100 * time.Millisecond, BackoffMax: 50 * time.Millisecond})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	do := func(line string) string {
		r, err := pool.Do(ctx, sys, line)
		if err != nil {
			return "error: " + err.Error()
		}
		return r
	}

	fmt.Fprintln(out, "ECHO 1 ->", do("ECHO 1"))
	fmt.Fprintln(out, "DROP 2 ->", do("DROP 2"))
	fmt.Fprintln(out, "ECHO 3 ->", do("ECHO 3"))

	// A lease: several requests on one connection.
	l, err := pool.Checkout(sys, 5*time.Second)
	if err != nil {
		return err
	}
	for i := 4; i <= 5; i++ {
		r, err := l.Exec(sys, fmt.Sprintf("ECHO %d", i), 5*time.Second)
		fmt.Fprintf(out, "lease ECHO %d -> %s %v\n", i, r, errOrNil(err))
	}
	pool.Checkin(sys, l)

	// The upstream goes away: requests wait for a connection until the
	// failed dials open the breaker; then they fail at once.
	up.Stop()
	for i := 6; ; i++ {
		r := do(fmt.Sprintf("ECHO %d", i))
		fmt.Fprintf(out, "upstream stopped: ECHO %d -> %s\n", i, r)
		if r == "error: "+ErrCircuitOpen.Error() {
			break
		}
		if ctx.Err() != nil {
			return errors.New("the breaker did not open")
		}
	}
	// It comes back on a new port; the breaker's probe closes it again.
	if err := up.Restart("127.0.0.1:0"); err != nil {
		return err
	}
	pool.SetAddr(sys, up.Addr())
	for i := 100; ; i++ {
		r := do(fmt.Sprintf("ECHO %d", i))
		if r == fmt.Sprintf("OK %d", i) {
			fmt.Fprintf(out, "upstream back on a new port: ECHO %d -> %s\n", i, r)
			break
		}
		if ctx.Err() != nil {
			return errors.New("the pool did not recover")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The worker answers the probe's caller before it tells the manager
	// how the request went, so the breaker closes a moment after the
	// reply: wait for it.
	for {
		s, err := pool.Stats(sys)
		if err != nil || s.Breaker == Closed || ctx.Err() != nil {
			fmt.Fprintf(out, "stats: %+v %v\n", s, errOrNil(err))
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

func errOrNil(err error) any {
	if err == nil {
		return ""
	}
	return err
}

func main() {
	if err := demo(os.Stdout); err != nil {
		log.Fatal(err)
	}
}
