package supervisor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

type slowInit struct{ actor.ServerBase }

func (slowInit) Init(c *actor.Context) error {
	c.Sleep(time.Minute) // unwound by the starter's kill
	return nil
}

// review8: a child whose Init timed out (InitTimeout) fails its start with
// a *StartError that errors.Is takes for ErrTimeout; through StartChild's
// *ChildStartError and supervisor.Start's error (whose reasons carry the
// start's Reason, Atom("timeout"), not the error) it did not, though
// 49ec88b made start errors unwrap to their cause through both.
func TestReview8ChildInitTimeoutUnwrapsToErrTimeout(t *testing.T) {
	sys := testsys.Start(t, actor.Config{Logger: func(string, ...any) {}})
	start := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return actor.SpawnServer(c, slowInit{}, actor.InitTimeout(10*time.Millisecond))
	}
	top, err := supervisor.Start(sys, supervisor.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = supervisor.StartChild(sys, top, supervisor.ChildSpec{ID: "slow", Start: start})
	var cse *supervisor.ChildStartError
	if !errors.As(err, &cse) || !errors.Is(err, actor.ErrTimeout) {
		t.Errorf("StartChild: %v; want a *ChildStartError that errors.Is takes for ErrTimeout", err)
	}
	_, err = supervisor.Start(sys, supervisor.Spec{Children: []supervisor.ChildSpec{{ID: "slow", Start: start}}})
	if !errors.Is(err, actor.ErrTimeout) {
		t.Errorf("supervisor.Start: %v; want it to unwrap to ErrTimeout", err)
	}
}
