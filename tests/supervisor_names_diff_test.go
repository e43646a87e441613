package tests

// The Go side of testdata/erlang/supervisor/killed_sup_names: the parent of
// a killed supervisor gets its Exit before the supervisor's children are
// gone, so a name a child holds may still be taken then, in OTP and here
// alike; what is pinned is what a user can rely on: once the parent has
// seen each child's own Down, every name is free, and the same tree, with
// the same names, starts again (docs/guarantees.md says what to do).

import (
	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

func init() {
	supScenarios["killed_sup_names"] = func(s *scen) {
		ids := []string{"w1", "w2", "w3"}
		// named(Id) in the escript: a quiet worker started with {local, Id}.
		named := func() []supervisor.ChildSpec {
			var kids []supervisor.ChildSpec
			for _, id := range ids {
				t := s.tracer
				kids = append(kids, supervisor.ChildSpec{ID: id, Restart: supervisor.Permanent,
					Start: supervisor.ServerStart(func(...any) actor.Server { return &worker{t: t, id: id, opts: wopts{quiet: true}} },
						actor.WithSpawn(actor.Name(id)))})
			}
			return kids
		}
		whereAll := func() {
			for _, id := range ids {
				if pid, ok := s.c.System().Whereis(id); ok {
					s.ev("whereis", id, pid)
				} else {
					s.ev("whereis", id, undefined)
				}
			}
		}
		fl := flags(supervisor.OneForOne, 3)
		sup := s.startSup("sup", fl, named()...)
		whereAll()
		var ms []actor.Ref
		for _, id := range ids {
			ms = append(ms, s.mon(s.pid(id)))
		}
		s.c.Exit(sup, actor.Kill)
		s.awaitExit(sup)
		for _, m := range ms {
			s.awaitDown(m)
		}
		whereAll()
		sup2 := s.startSup("sup", fl, named()...)
		whereAll()
		s.stopSup(sup2)
		whereAll()
		s.mailbox()
	}
}
