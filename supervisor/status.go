package supervisor

import (
	"fmt"
	"strings"
)

// FormatStatus is what a supervisor's status shows of its state
// (actor.StatusFormatter; sysmsg.GetStatus and sys:get_status from an
// Erlang node): its strategy and its children in start order, each with
// its pid, "restarting" or "not running", and how many dynamic children
// (SimpleOneForOne) it has. It runs on the supervisor's goroutine.
func (s *sup) FormatStatus() any {
	var b strings.Builder
	fmt.Fprintf(&b, "strategy %v, children [", s.spec.Strategy)
	for i, k := range s.kids {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case k.restarting:
			fmt.Fprintf(&b, "%s restarting", k.spec.ID)
		case k.pid.IsZero():
			fmt.Fprintf(&b, "%s not running", k.spec.ID)
		default:
			fmt.Fprintf(&b, "%s %v", k.spec.ID, k.pid)
		}
	}
	fmt.Fprintf(&b, "], %d dynamic", len(s.dyn))
	return b.String()
}
