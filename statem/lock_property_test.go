package statem_test

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
	"github.com/colonyrt/colony/statem"
)

// codeLock is the property test's lock: digits cast while locked build the
// code (a wrong digit clears it); the code opens the lock for relock,
// after which a state timeout locks it again. While open, digits and
// "wait" calls are postponed; "count" calls are answered in any state.
type codeLock struct {
	code, entered string
	opens         int
	relock        time.Duration
}

type lockCount struct {
	State string
	Opens int
}

func (l *codeLock) Init(*statem.Context[string]) (string, error) { return "locked", nil }

func (l *codeLock) Enter(c *statem.Context[string], old, st string) {
	if st == "open" {
		l.opens++
		l.entered = ""
		c.StateTimeout(l.relock, "relock")
	}
}

func (l *codeLock) HandleEvent(c *statem.Context[string], st string, ev statem.Event) {
	switch {
	case ev.Type == statem.Call && ev.Msg == "count":
		c.Reply(ev.Req, lockCount{st, l.opens})
	case st == "open" && ev.Type == statem.StateTimeout:
		c.NextState("locked")
	case st == "open":
		c.Postpone()
	case ev.Type == statem.Call: // "wait", locked
		c.Reply(ev.Req, lockCount{st, l.opens})
	case ev.Type == statem.Cast:
		l.entered += ev.Msg.(string)
		switch {
		case l.entered == l.code:
			c.NextState("open")
		case len(l.entered) >= len(l.code) || l.code[:len(l.entered)] != l.entered:
			l.entered = ""
		}
	}
}

func (l *codeLock) Terminate(*statem.Context[string], actor.Reason, string) {}

// lockModel is the lock as the test expects it: digits typed while open
// wait, in order, until it locks, then count toward the code.
type lockModel struct {
	code, entered string
	open          bool
	opens         int
	waiting       []string
}

func (m *lockModel) press(d string) {
	if m.open {
		m.waiting = append(m.waiting, d)
		return
	}
	m.entered += d
	switch {
	case m.entered == m.code:
		m.open, m.opens, m.entered = true, m.opens+1, ""
	case len(m.entered) >= len(m.code) || m.code[:len(m.entered)] != m.entered:
		m.entered = ""
	}
}

// relock locks the lock and replays the digits that waited, which may open
// it again.
func (m *lockModel) relock() {
	m.open = false
	ds := m.waiting
	m.waiting = nil
	for _, d := range ds {
		m.press(d)
	}
}

// TestCodeLockProperty: for any drawn sequence of digits, "count" calls and
// "wait" calls (which block until the lock is locked, across relocks, on
// colonytest's virtual clock), the lock's answers match the model: digits
// typed while open are postponed and replayed in order after it relocks.
func TestCodeLockProperty(t *testing.T) {
	colonytest.Check(t, func(rt *rapid.T, sys *actor.System) {
		code := rapid.StringMatching(`[12]{1,3}`).Draw(rt, "code")
		pid, err := statem.Start[string](sys, &codeLock{code: code, relock: 10 * time.Second})
		if err != nil {
			rt.Fatal(err)
		}
		m := &lockModel{code: code}
		for i, step := range rapid.SliceOfN(rapid.SampledFrom([]string{"1", "2", "count", "wait"}), 1, 30).Draw(rt, "steps") {
			switch step {
			case "1", "2":
				actor.Cast(sys, pid, step)
				m.press(step)
				continue
			case "wait":
				for m.open {
					m.relock()
				}
			}
			got, err := actor.Call[lockCount](sys, pid, step, time.Hour)
			want := lockCount{"locked", m.opens}
			if m.open {
				want.State = "open"
			}
			if err != nil || got != want {
				rt.Fatalf("step %d (%s): got %+v, %v; want %+v", i, step, got, err, want)
			}
		}
	})
}

func (c lockCount) String() string { return fmt.Sprintf("%s/%d", c.State, c.Opens) }
