package pg_test

import (
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/internal/erltest"
	"github.com/colonyrt/colony/dist/pg"
	"github.com/colonyrt/colony/internal/disttest"
	"github.com/colonyrt/colony/internal/testsys"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testEPMD returns the port of an epmd private to the test: a real epmd
// when one is installed, else a registrar served by this process.
func testEPMD(t testing.TB) int { return disttest.EPMD(t, erltest.EPMD) }

// reports collects a System's reports, for tests that look for one.
type reports struct {
	mu   sync.Mutex
	text []string
}

func (r *reports) add(rep actor.Report) {
	r.mu.Lock()
	r.text = append(r.text, rep.Context+": "+rep.Text)
	r.mu.Unlock()
}

func (r *reports) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.text...)
}

type node struct {
	*dist.Node
	sys     *actor.System
	scope   *pg.Scope
	reports *reports
}

// startNode starts a System, a node named name (disttest.UniqueName("pg") if
// empty) registered with the epmd at port, and the default scope on it;
// all stop at the test's end.
func startNode(t testing.TB, port int, name string, opts ...pg.Option) *node {
	t.Helper()
	if name == "" {
		name = disttest.UniqueName("pg")
	}
	r := &reports{}
	sys := testsys.Start(t, actor.Config{Reporter: r.add})
	n, err := dist.Start(sys, dist.Config{Name: name, Cookie: "pgcookie", EPMDPort: port,
		HandshakeTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("dist.Start %s: %v", name, err)
	}
	s, err := pg.Start(n, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &node{Node: n, sys: sys, scope: s, reports: r}
}

// idle is a member that does nothing until it is killed.
type idle struct{}

func (idle) Receive(*actor.Context, any) {}

func spawnIdle(t testing.TB, sys *actor.System) actor.Pid {
	t.Helper()
	pid, err := sys.Spawn(idle{})
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// count is how many times p is in pids.
func count(pids []actor.Pid, p actor.Pid) int {
	k := 0
	for _, q := range pids {
		if q == p {
			k++
		}
	}
	return k
}

// byNode counts pids by node: a local pid counts under local.
func byNode(pids []actor.Pid, local actor.Atom) map[actor.Atom]int {
	out := map[actor.Atom]int{}
	for _, p := range pids {
		if id, ok := p.Remote(); ok {
			out[id.Node]++
		} else {
			out[local]++
		}
	}
	return out
}
