package sysmsg_test

import (
	"context"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/sysmsg"
)

// counter counts the casts it gets; its status shows only the count.
type counter struct {
	actor.ServerBase
	n int
}

func (s *counter) HandleCast(*actor.Context, any) { s.n++ }
func (s *counter) FormatStatus() any              { return fmt.Sprintf("count=%d", s.n) }

// Suspend a server, look at it, and resume it: the casts sent while it was
// suspended wait in its mailbox, in order, and are handled after Resume.
func Example() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	pid, _ := actor.StartServer(sys, &counter{})

	actor.Cast(sys, pid, "a")
	sysmsg.Suspend(sys, pid, time.Second)
	actor.Cast(sys, pid, "b")
	st, _ := sysmsg.GetStatus(sys, pid, time.Second)
	fmt.Println(st.Suspended, st.State)

	sysmsg.Resume(sys, pid, time.Second)
	st, _ = sysmsg.GetStatus(sys, pid, time.Second)
	fmt.Println(st.Suspended, st.State)

	fmt.Println(sysmsg.Stop(sys, pid, nil, time.Second))
	// Output:
	// true count=1
	// false count=2
	// <nil>
}
