package tests

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/tests/erldiff"
)

// runGroup runs every scenario of an erldiff group as a parallel subtest:
// the Go side (run with the scenario's body from scens, by short name)
// against a live Erlang run of the escript, or against its golden trace
// when COLONY_GO_ONLY is set. A live run is also compared with the golden
// trace, so that a stale golden file or a scenario whose trace is not
// deterministic fails here (the suite runs each escript once; -update in
// tests/erldiff rewrites the golden files). Every escript must have a Go
// side and every Go side an escript. Each subtest is counted in
// diffCounts, reported by TestMain.
func runGroup[B any](t *testing.T, group string, scens map[string]B, run func(t *testing.T, body B) []string) {
	names := erldiff.Scenarios(t, group)
	for _, name := range names {
		short := name[strings.LastIndex(name, "/")+1:]
		body, ok := scens[short]
		if !ok {
			t.Errorf("no Go side for scenario %s", name)
			continue
		}
		t.Run(short, func(t *testing.T) {
			t.Parallel()
			got := run(t, body)
			if os.Getenv("COLONY_GO_ONLY") != "" {
				diffCounts.golden.Add(1)
				erldiff.Compare(t, erldiff.Golden(t, name), got)
				return
			}
			defer func() { // erldiff.Run skips (runtime.Goexit) without escript
				if t.Skipped() {
					diffCounts.skipped.Add(1)
				} else {
					diffCounts.otp.Add(1)
				}
			}()
			live := liveTrace(t, name)
			erldiff.Compare(t, live, got)
			if golden := erldiff.Golden(t, name); !slices.Equal(live, golden) {
				t.Errorf("golden trace of %s differs from the live run: a stale golden file (go test ./tests/erldiff -run TestGoldenFiles -update) or a scenario that is not deterministic (-golden +live):\n%s",
					name, erldiff.Diff(golden, live))
			}
		})
	}
	if len(scens) != len(names) {
		t.Errorf("%s: %d Go scenarios for %d escripts", group, len(scens), len(names))
	}
}

// liveTraces holds each escript's live trace once it has run in this test
// process: the reference cannot change between repetitions of the suite
// (-count), so only the first runs Erlang; every repetition runs the Go
// side anew and compares it.
var liveTraces sync.Map // escript name -> []string

func liveTrace(t *testing.T, name string) []string {
	if v, ok := liveTraces.Load(name); ok {
		return v.([]string)
	}
	live := erldiff.Run(t, name) // a failure ends t: nothing is stored
	liveTraces.Store(name, live)
	return live
}

// mainProc is a scenario's main process: the Go actor playing the escript's
// main (named "main" in the trace) and the tracer it prints to. The link and
// supervisor scenarios embed it; these are the helpers both scripts' .hrl
// files share (mon/1, await_down/1, await_exit/1, mailbox/0).
type mainProc struct {
	*tracer
	c *actor.Context
}

// nameRef names a ref made inside a scenario process, as the escripts'
// ets:insert(colony_names, {Ref, Name}).
func (s *mainProc) nameRef(ref actor.Ref, name string) {
	s.mu.Lock()
	s.refs[ref] = name
	s.mu.Unlock()
}

// mon monitors pid and names the ref m1, m2, ... as mon/1 does.
func (s *mainProc) mon(pid actor.Pid) actor.Ref {
	ref, _ := s.c.Monitor(pid)
	s.mu.Lock()
	s.nref++
	s.refs[ref] = fmt.Sprintf("m%d", s.nref)
	s.mu.Unlock()
	return ref
}

// awaitDown waits for the Down of ref and prints "down <ref> <pid> <reason>".
func (s *mainProc) awaitDown(ref actor.Ref) {
	m, _ := s.c.Receive(func(m any) bool { d, ok := m.(actor.Down); return ok && d.Ref == ref }, actor.Infinity)
	d := m.(actor.Down)
	s.ev("down", ref, d.Pid, d.Reason)
}

// awaitExit waits for the Exit from `from` and prints "exit main <from> <reason>".
func (s *mainProc) awaitExit(from actor.Pid) {
	m, _ := s.c.Receive(func(m any) bool { e, ok := m.(actor.Exit); return ok && e.From == from }, actor.Infinity)
	s.ev("exit", s.c.Self(), from, m.(actor.Exit).Reason)
}

// mailbox prints, and takes out, what is left in the mailbox (mailbox/0).
func (s *mainProc) mailbox() { s.printMailbox(s.drainMailbox()) }

// drainMailbox takes every message now in the mailbox, in order.
func (s *mainProc) drainMailbox() []any {
	var ms []any
	for {
		m, err := s.c.Receive(nil, 0)
		if err != nil {
			return ms
		}
		ms = append(ms, m)
	}
}

func (s *mainProc) printMailbox(ms []any) {
	s.printMailboxAs(ms, func(m any) any { return fmt.Sprintf("%T", m) })
}

// printMailboxAs prints ms as printMailbox does, a plain message as plain
// makes it.
func (s *mainProc) printMailboxAs(ms []any, plain func(any) any) {
	for _, m := range ms {
		switch v := m.(type) {
		case actor.Exit:
			s.ev("mailbox", "main", tup{"'EXIT'", v.From, v.Reason})
		case actor.Down:
			s.ev("mailbox", "main", tup{"'DOWN'", v.Ref, "process", v.Pid, v.Reason})
		default:
			s.ev("mailbox", "main", plain(m))
		}
	}
	if len(ms) == 0 {
		s.ev("mailbox", "empty")
	}
}
