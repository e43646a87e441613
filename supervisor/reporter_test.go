package supervisor_test

import (
	"context"
	"sync"
	"testing"
	"time"

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

// TestChildTerminatedReportSaysWhetherARestartFollows: the report's Extra
// carries restart=true for a permanent child's crash, false for a
// temporary child's (counters of restarts read it).
func TestChildTerminatedReportSaysWhetherARestartFollows(t *testing.T) {
	reports := make(chan actor.Report, 16)
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}, Reporter: func(r actor.Report) {
		if r.Context == "child_terminated" {
			reports <- r
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown(context.Background())
	crasher := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(actor.ActorFunc(func(*actor.Context, any) { panic("crash") }))
	}
	sup, err := supervisor.Start(sys, supervisor.Spec{Intensity: 10, Period: time.Minute, Children: []supervisor.ChildSpec{
		{ID: "perm", Start: crasher},
		{ID: "temp", Start: crasher, Restart: supervisor.Temporary},
	}})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := supervisor.WhichChildren(sys, sup)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		sys.Send(k.Pid, "go")
		r := <-reports
		if r.ChildID != k.ID || len(r.Extra) != 1 || r.Extra[0].Key != "restart" || r.Extra[0].Value.Bool() != (k.ID == "perm") {
			t.Fatalf("report for %s: %+v", k.ID, r)
		}
	}
}
