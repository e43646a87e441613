package supervisor_test

import (
	"sync"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/supervisor"
)

// TestSupervisorReportFields: a supervisor's reports reach
// Config.Reporter with typed fields (the supervisor, its name, the
// context, the child's id, pid and reason), so a service can count child
// restarts and shutdown errors without parsing text.
func TestSupervisorReportFields(t *testing.T) {
	var mu sync.Mutex
	var got []actor.Report
	sys := testsys.Start(t, actor.Config{Reporter: func(r actor.Report) {
		if r.Kind == actor.SupervisorReport {
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
		}
	}})
	sup, err := supervisor.Start(sys, supervisor.Spec{Name: "top", Intensity: 1, Children: []supervisor.ChildSpec{
		{ID: "w", Start: supervisor.ServerStart(func(...any) actor.Server { return stopper{} })},
	}})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := supervisor.WhichChildren(sys, sup)
	if err != nil {
		t.Fatal(err)
	}
	w := kids[0].Pid
	actor.Cast(sys, w, actor.Atom("boom"))
	var rs []actor.Report
	waitFor(t, "the child_terminated report", func() bool {
		mu.Lock()
		defer mu.Unlock()
		rs = append(rs[:0], got...)
		return len(rs) > 0
	})
	r := rs[0]
	if r.Context != "child_terminated" || r.Pid != sup || r.Name != "top" || r.ChildID != "w" ||
		len(r.ChildPids) != 1 || r.ChildPids[0] != w || r.Reason != actor.Atom("boom") {
		t.Fatalf("report %+v", r)
	}
	if want := "supervisor top " + sup.String() + ": child w (" + w.String() + ") terminated: boom"; r.Text != want {
		t.Fatalf("text %q, want %q", r.Text, want)
	}
	// A second crash within the period exceeds the intensity: the
	// supervisor reports it is shutting down.
	kids, _ = supervisor.WhichChildren(sys, sup)
	actor.Cast(sys, kids[0].Pid, actor.Atom("boom"))
	// The report is written before the supervisor stops.
	waitFor(t, "the supervisor to give up", func() bool { return !sys.Alive(sup) })
	mu.Lock()
	defer mu.Unlock()
	last := got[len(got)-1]
	if last.Context != "shutdown" || last.ChildID != "w" || last.Reason != actor.Atom("reached_max_restart_intensity") {
		t.Fatalf("last report %+v, want the intensity shutdown", last)
	}
}
