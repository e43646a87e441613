package supervisor

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
)

// TestCountChildrenDeadPid: count_children counts a static child as active
// only if its process is alive, as OTP 25's count_child does, also when the
// supervisor still holds the pid of a child that has died (its Exit not yet
// handled: count_children called right after the child's death). It
// counted any child with a pid.
func TestCountChildrenDeadPid(t *testing.T) {
	sys := testsys.Start(t, actor.Config{})
	dead, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, _ any) { c.Stop(actor.Normal) }))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(dead, "stop")
	for deadline := time.Now().Add(5 * time.Second); sys.Alive(dead); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the actor is still alive")
		}
	}
	live, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err != nil {
		t.Fatal(err)
	}
	s := newSup(Spec{})
	s.kids = []*child{
		{spec: ChildSpec{ID: "dead"}, pid: dead},
		{spec: ChildSpec{ID: "live", Type: Supervisor}, pid: live},
		{spec: ChildSpec{ID: "stopped"}},
	}
	got := s.count(sys.Alive)
	want := Counts{Specs: 3, Active: 1, Supervisors: 1, Workers: 2}
	if got != want {
		t.Fatalf("count = %+v, want %+v", got, want)
	}
}
