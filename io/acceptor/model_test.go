package acceptor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/io/acceptor"
)

// TestMaxConnsModel drives a Listener with a random limit and random
// acceptor count through random sequences of clients connecting (each
// writes one request at once) and closing, against a model of the limit:
// the kernel queues connections in the order they are made, the listener
// accepts the oldest while fewer than MaxConns are counted, and a client
// closed before it was accepted is still accepted, seen closed and ended.
// So once things settle, the served clients are the oldest MaxConns of
// those still open: each of them gets its answer, Conns is their number,
// and at the limit the listener asks the socket for nothing.
func TestMaxConnsModel(t *testing.T) {
	sys, _ := startSys(t)
	rapid.Check(t, func(rt *rapid.T) {
		max := rapid.IntRange(1, 3).Draw(rt, "max")
		l, err := acceptor.Start(sys, "127.0.0.1:0", newLine(nil),
			acceptor.MaxConns(max), acceptor.Acceptors(rapid.IntRange(1, 3).Draw(rt, "acceptors")))
		if err != nil {
			rt.Fatal(err)
		}
		defer l.Stop(context.Background())
		type cl struct {
			c        *client
			answered bool
		}
		var open []*cl // in connection order
		dialed := 0
		check := func(rt *rapid.T) {
			served := open[:min(max, len(open))]
			for _, x := range served {
				if !x.answered {
					x.c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
					if got := x.c.read(); !strings.HasPrefix(got, "<") {
						rt.Fatalf("a client the model serves read %q", got)
					}
					x.answered = true
				}
			}
			for _, x := range open[len(served):] {
				if x.answered {
					rt.Fatal("a client past the limit was served")
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				d, _, _, err := acceptor.State(sys, l)
				ok := err == nil && l.Conns() == len(served) && (len(served) < max || d == 0)
				if ok {
					break
				}
				if time.Now().After(deadline) {
					rt.Fatalf("conns %d, want %d; demand %d (%v)", l.Conns(), len(served), d, err)
				}
				time.Sleep(time.Millisecond)
			}
			if n := l.Accepted(); n > uint64(dialed) {
				rt.Fatalf("accepted %d of %d", n, dialed)
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"connect": func(rt *rapid.T) {
				c := dial(t, l)
				if _, err := c.nc.Write([]byte("who\n")); err != nil {
					rt.Fatal(err)
				}
				dialed++
				open = append(open, &cl{c: c})
				check(rt)
			},
			"close": func(rt *rapid.T) {
				if len(open) == 0 {
					rt.Skip("nobody to close")
				}
				i := rapid.IntRange(0, len(open)-1).Draw(rt, "i")
				open[i].c.close()
				open = append(open[:i], open[i+1:]...)
				check(rt)
			},
		})
		for _, x := range open {
			x.c.close()
		}
	})
}
