package colonytest

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
)

// Probe is an actor that records every message it receives, for a test to
// send to (as a reply address, a monitor, a subscriber) and then check with
// Expect. Its methods are for the test body (outside the System); they
// wait on the virtual clock. A Probe may not be copied.
type Probe struct {
	sys *actor.System
	pid actor.Pid
	st  *probeState
}

// probeState is the probe actor's record: written by its handler, read by
// Messages under mu.
type probeState struct {
	mu   sync.Mutex
	got  []any // every message, oldest first
	left []any // those no Expect has taken, oldest first; handler only
	wait []probeWait
}

type probeWait struct {
	req   actor.Request
	match func(any) bool
}

type probe struct{ st *probeState }

type expectReq struct{ match func(any) bool }

type messagesReq struct{}

func (a *probe) Receive(c *actor.Context, msg any) {
	st := a.st
	if req, ok := msg.(actor.Request); ok {
		switch m := req.Msg.(type) {
		case expectReq:
			for i, x := range st.left {
				if m.match(x) {
					st.left = append(st.left[:i:i], st.left[i+1:]...)
					c.Reply(req, x)
					return
				}
			}
			st.wait = append(st.wait, probeWait{req, m.match})
			return
		case messagesReq:
			st.mu.Lock()
			out := append([]any(nil), st.got...)
			st.mu.Unlock()
			c.Reply(req, out)
			return
		}
	}
	st.mu.Lock()
	st.got = append(st.got, msg)
	st.mu.Unlock()
	for i := 0; i < len(st.wait); i++ {
		w := st.wait[i]
		if !c.Waiting(w.req) {
			st.wait = append(st.wait[:i:i], st.wait[i+1:]...)
			i--
			continue
		}
		if w.match(msg) {
			st.wait = append(st.wait[:i:i], st.wait[i+1:]...)
			c.Reply(w.req, msg)
			return
		}
	}
	st.left = append(st.left, msg)
}

// NewProbe spawns a probe in sys.
func NewProbe(sys *actor.System) (*Probe, error) {
	st := &probeState{}
	pid, err := sys.Spawn(&probe{st: st})
	if err != nil {
		return nil, err
	}
	return &Probe{sys: sys, pid: pid, st: st}, nil
}

// Pid is the probe's pid.
func (p *Probe) Pid() actor.Pid { return p.pid }

// ErrNoMessage is Expect's error when no message matched within its
// timeout.
var ErrNoMessage = errors.New("colonytest: no matching message")

// Expect waits up to timeout (virtual) for a message match accepts that no
// earlier Expect took, and takes it: messages that came before it and do
// not match stay for later Expects. A nil match takes the oldest message.
// The error, ErrNoMessage when nothing matched, lists what the probe holds.
func (p *Probe) Expect(timeout time.Duration, match func(msg any) bool) (any, error) {
	if match == nil {
		match = func(any) bool { return true }
	}
	v, err := p.sys.Call(p.pid, expectReq{match}, timeout)
	if errors.Is(err, actor.ErrTimeout) {
		got, _ := p.Messages()
		return nil, fmt.Errorf("%w within %v; the probe has received %d: %v", ErrNoMessage, timeout, len(got), got)
	}
	return v, err
}

// ExpectMsg waits up to timeout for a message equal to want (==).
func (p *Probe) ExpectMsg(timeout time.Duration, want any) error {
	_, err := p.Expect(timeout, func(m any) bool { return m == want })
	if err != nil {
		return fmt.Errorf("expecting %v: %w", want, err)
	}
	return nil
}

// Expect is the typed Probe.Expect: it waits for a message of type T that
// match accepts (a nil match: any T).
func Expect[T any](p *Probe, timeout time.Duration, match func(T) bool) (T, error) {
	v, err := p.Expect(timeout, func(m any) bool {
		x, ok := m.(T)
		return ok && (match == nil || match(x))
	})
	if err != nil {
		var zero T
		return zero, fmt.Errorf("expecting a %T: %w", *new(T), err)
	}
	return v.(T), nil
}

// Messages returns every message the probe has received so far, oldest
// first, those Expect took included.
func (p *Probe) Messages() ([]any, error) {
	v, err := p.sys.Call(p.pid, messagesReq{}, actor.Infinity)
	if err != nil {
		return nil, err
	}
	return v.([]any), nil
}
