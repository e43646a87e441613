package actor

import (
	"strings"
	"testing"
	"time"
)

// TestPeekMailboxShowsQueuedMessages: the actor formats its own queue
// between two messages; the peek sees what is queued, oldest first, and
// takes nothing (the messages are handled afterwards, in order).
func TestPeekMailboxShowsQueuedMessages(t *testing.T) {
	sys := startInternal(t, Config{})
	gate, holding := make(chan struct{}), make(chan struct{})
	handled := make(chan any, 10)
	pid, err := sys.Spawn(ActorFunc(func(c *Context, msg any) {
		if msg == "hold" {
			close(holding)
			<-gate
			return
		}
		handled <- msg
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "hold")
	<-holding
	sys.Send(pid, 1)
	sys.Send(pid, "two")
	sys.Send(pid, strings.Repeat("x", 500))
	type result struct {
		msgs []string
		err  error
	}
	res := make(chan result, 1)
	go func() {
		m, err := sys.PeekMailbox(pid, 2, 10*time.Second)
		res <- result{m, err}
	}()
	p, _ := sys.lookup(pid)
	obsPoll(t, "the peek's signal", p.mbox.HasSignal)
	close(gate)
	r := <-res
	if r.err != nil || len(r.msgs) != 2 || r.msgs[0] != "int: 1" || r.msgs[1] != "string: two" {
		t.Fatalf("PeekMailbox(2) = %q, %v", r.msgs, r.err)
	}
	for _, want := range []any{1, "two"} {
		if got := <-handled; got != want {
			t.Fatalf("handled %v after the peek, want %v", got, want)
		}
	}
	if long := <-handled; len(long.(string)) != 500 {
		t.Fatal("the long message was not handled whole")
	}
	if got := formatPeek(strings.Repeat("y", 500)); len(got) != 200 || !strings.HasSuffix(got, "...") {
		t.Fatalf("formatPeek of a long value: %d bytes", len(got))
	}
	if got := formatPeek(panicky{}); !strings.Contains(got, "PANIC") && !strings.Contains(got, "String panicked") {
		t.Fatalf("formatPeek of a panicking String: %q", got)
	}
}

type panicky struct{}

func (panicky) String() string { panic("no") }

// TestExitClass: the reason classes of ExitCounts.
func TestExitClass(t *testing.T) {
	for r, want := range map[Reason]int{
		Normal: exitNormal, Shutdown: exitShutdown, ShutdownWith{"x"}: exitShutdown,
		Killed: exitKilled, Panic{Value: 1}: exitPanic, Atom("oops"): exitOther, 42: exitOther,
		replacedReason{exit: Panic{Value: 2}, was: Shutdown}: exitPanic,
	} {
		if got := exitClass(r); got != want {
			t.Errorf("exitClass(%v) = %d, want %d", r, got, want)
		}
	}
}

// TestHistBuckets: a duration lands in the first bucket whose bound holds
// it; past the last bound, in the overflow bucket.
func TestHistBuckets(t *testing.T) {
	for _, c := range []struct {
		d      int64
		bucket int
	}{{1, 0}, {256, 0}, {257, 1}, {512, 1}, {513, 2}, {1 << 40, histBuckets - 1}} {
		var h hist
		h.observe(c.d, 3, 3*c.d)
		if h.counts[c.bucket].Load() != 3 || h.count.Load() != 3 || h.sum.Load() != 3*c.d {
			t.Errorf("observe(%d): bucket %d holds %d", c.d, c.bucket, h.counts[c.bucket].Load())
		}
		if c.bucket < histBuckets-1 && time.Duration(c.d) > histBounds[c.bucket] {
			t.Errorf("%d ns is past bucket %d's bound %v", c.d, c.bucket, histBounds[c.bucket])
		}
	}
}

// obsPoll polls cond until it holds, failing the test after 10 s.
func obsPoll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
