//go:build unix

package dist_test

// Differential tests of links, exits and monitors against real Erlang/OTP
// nodes. Each scenario of testdata/sigdiff.erl runs on an Erlang driver
// node twice: against an Erlang peer node and against a Colony node, whose
// controller (sigCtl) speaks the same protocol as the module's; the two
// traces, pids replaced by role names, must be equal (and free of
// timeouts).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/internal/erltest"
)

// sigCtl is the Colony side of sigdiff's controller protocol.
type sigCtl struct{ n *dist.Node }

func (s *sigCtl) Receive(c *actor.Context, msg any) {
	t, ok := msg.(etf.Tuple)
	if !ok || len(t) != 3 || t[0] != actor.Atom("ctl") {
		return
	}
	from, _ := t[1].(etf.Tuple)
	req, _ := t[2].(etf.Tuple)
	if len(from) != 2 || len(req) != 3 || req[0] != actor.Atom("spawn") {
		return
	}
	var opts []actor.SpawnOption
	if req[1] == true {
		opts = append(opts, actor.TrapExit())
	}
	if name, ok := req[2].(actor.Atom); ok && name != "undefined" {
		opts = append(opts, actor.Name(string(name)))
	}
	pid, err := c.Spawn(&sigProc{n: s.n}, opts...)
	if err != nil {
		panic(err)
	}
	c.Send(from[0].(actor.Pid), etf.Tuple{from[1], pid})
}

// sigProc is a peer process of the controller protocol.
type sigProc struct {
	n     *dist.Node
	inbox []any
}

var okAtom = actor.Atom("ok")

func (s *sigProc) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Exit:
		if m.From.IsZero() { // the System's Shutdown
			c.Stop(m.Reason)
			return
		}
		s.inbox = append(s.inbox, etf.Tuple{actor.Atom("EXIT"), m.From, wire(m.Reason)})
		return
	case actor.Down:
		var obj any = m.Pid
		if m.Name != "" {
			node := m.Node
			if node == "" {
				node = s.n.Name()
			}
			obj = etf.Tuple{actor.Atom(m.Name), node}
		}
		s.inbox = append(s.inbox, etf.Tuple{actor.Atom("DOWN"), obj, wire(m.Reason)})
		return
	case dist.NodeDown:
		s.inbox = append(s.inbox, etf.Tuple{actor.Atom("nodedown"), m.Node})
		return
	}
	t, ok := msg.(etf.Tuple)
	if !ok || len(t) != 4 || t[0] != actor.Atom("do") {
		return
	}
	from, tag := t[1].(actor.Pid), t[2]
	op, _ := t[3].(etf.Tuple)
	reply := func(v any) { c.Send(from, etf.Tuple{tag, v}) }
	if a, ok := t[3].(actor.Atom); ok && a == "inbox" {
		reply(append([]any{}, s.inbox...))
		return
	}
	if len(op) < 2 {
		return
	}
	switch op[0] {
	case actor.Atom("link"):
		c.Link(op[1].(actor.Pid))
	case actor.Atom("unlink"):
		c.Unlink(op[1].(actor.Pid))
	case actor.Atom("monitor"):
		switch t := op[1].(type) {
		case actor.Pid:
			c.Monitor(t)
		case etf.Tuple:
			c.MonitorNameAt(string(t[0].(actor.Atom)), t[1].(actor.Atom))
		}
	case actor.Atom("monitor_node"):
		s.n.MonitorNode(c.Self(), op[1].(actor.Atom))
	case actor.Atom("exit"):
		c.Exit(op[1].(actor.Pid), local(op[2]))
	case actor.Atom("stop"):
		reply(okAtom)
		c.Stop(local(op[1]))
		return
	case actor.Atom("linked"):
		reply(c.System().HasRemoteLink(c.Self(), op[1].(actor.Pid)))
		return
	}
	reply(okAtom)
}

// sigdiffSetup is what each sigdiff test starts with: testdata/sigdiff.erl
// compiled into dir for erl's -pa, an epmd of the test's own on port, and
// a cookie. It needs erl, epmd and erlc (erltest.Need).
func sigdiffSetup(t *testing.T) (dir string, port int, ck string) {
	t.Helper()
	erltest.Need(t, "erl", "epmd", "erlc")
	src, err := os.ReadFile("testdata/sigdiff.erl")
	if err != nil {
		t.Fatal(err)
	}
	return erltest.Compile(t, "sigdiff", string(src)), erltest.EPMD(t), cookie(t)
}

func TestErlangSignalsDiff(t *testing.T) {
	dir, port, ck := sigdiffSetup(t)
	driver := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	epeer := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	if v := epeer.Eval("sigdiff:start_ctl()."); v != "ok" {
		t.Fatalf("start_ctl: %s", v)
	}
	n := startNode(t, port, dist.Config{Cookie: ck})
	if _, err := n.sys.Spawn(&sigCtl{n: n.Node}, actor.Name("ctl")); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []struct{ name, term, want string }{
		{"LinkAbnormal", "{link_exit, boom}", "[{l,{'EXIT',p,boom}},{n,{dead,boom}}]"},
		{"LinkShutdownWith", "{link_exit, {shutdown, x}}", "[{l,{'EXIT',p,{shutdown,x}}},{n,{dead,{shutdown,x}}}]"},
		{"LinkNormal", "{link_exit, normal}", "[{l,{'EXIT',p,normal}},{n,pong}]"},
		{"LinkKill", "{link_exit, kill}", "[{l,{'EXIT',p,killed}},{n,{dead,killed}}]"},
		{"TrappingPeer", "trapping_peer",
			"[{inbox,[{'EXIT',l,boom},{'EXIT',driver,normal},{'EXIT',driver,{shutdown,x}}]},{killed,noproc}]"},
		{"PeerLinksLocal", "peer_links_local", "[{inbox,[{'EXIT',l,killed},{'EXIT',d,noproc}]},{k,{'EXIT',p,bang}}]"},
		{"LinkDeadPid", "link_dead", "[{l,{'EXIT',d,noproc}},{n,noproc}]"},
		{"Monitors", "monitors", "[{unknown,{{sigdiff_nobody,peer},noproc}}," +
			"{downs,[{p,bang},{{sigdiff_target,peer},bang}]},{demonitored,none}," +
			"{peer_inbox,[{'DOWN',l,shutdown},{'DOWN',{sigdiff_local,driver},shutdown},{'DOWN',{sigdiff_none,driver},noproc}]}]"},
		{"PeerExitsLocal", "peer_exits_local", "[{l,[{'EXIT',p,boom},{'EXIT',p,normal}]},{n,pong},{k,killed}]"},
		{"Unlink", "unlink", "[{l,pong},{l_links,[]}]"},
		{"UnlinkRace", "{unlink_race, 200}", "[{agree,true}]"},
		{"Disconnect", "disconnect", "[{l,{'EXIT',p,noconnection}},{n,{'EXIT',p,noconnection}},{down,noconnection}," +
			"{nodedown,[nodedown,nodedown]}," +
			"{peer_inbox,[{nodedown,driver},{'DOWN',n,noconnection},{'EXIT',l,noconnection},{'EXIT',n,noconnection}]}]"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			ref := driver.Eval("sigdiff:run(" + sc.term + ", " + atomLit(actor.Atom(epeer.Name)) + ").")
			got := driver.Eval("sigdiff:run(" + sc.term + ", " + atomLit(n.Name()) + ").")
			t.Logf("trace: %s", got)
			if got != ref {
				t.Errorf("Colony peer:\n  %s\nErlang peer:\n  %s", got, ref)
			}
			if sc.want != "" && ref != sc.want {
				t.Errorf("Erlang's trace %s, want %s (the scenario's expectation is stale)", ref, sc.want)
			}
			if strings.Contains(ref, "timeout") || strings.Contains(ref, "eval_error") {
				t.Errorf("the reference run failed: %s", ref)
			}
		})
	}
}

// A node is killed (erlang:halt(), or SIGKILL of its OS process) while
// processes of an observer are linked to and monitor processes of it:
// every link and monitor fires with noconnection exactly once, and
// monitor_node gives one nodedown. The observer is an Erlang node (the
// reference) or a Colony node; the victim is an Erlang node.
func TestErlangNodeKilledNoConnection(t *testing.T) {
	dir, port, ck := sigdiffSetup(t)
	const k = 10
	want := "{[[{down,noconnection},{exit,noconnection}]],1}"
	victim := func() *erltest.Node {
		v := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
		if r := v.Eval("sigdiff:start_ctl()."); r != "ok" {
			t.Fatalf("start_ctl: %s", r)
		}
		return v
	}
	kill := func(v *erltest.Node, how string) {
		switch how {
		case "halt":
			v.EvalTimeout("erlang:halt().", 10*time.Second) // no value comes back
		case "sigkill":
			v.Signal(syscall.SIGKILL)
		}
		select {
		case <-v.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the victim did not exit")
		}
	}
	for _, how := range []string{"halt", "sigkill"} {
		t.Run("Erlang_"+how, func(t *testing.T) {
			obs := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
			v := victim()
			if r := obs.Eval(fmt.Sprintf("S = sigdiff:kill_setup(%s, %d), ok.", atomLit(actor.Atom(v.Name)), k)); r != "ok" {
				t.Fatalf("kill_setup: %s", r)
			}
			kill(v, how)
			if r := obs.Eval("sigdiff:kill_trace(S)."); r != want {
				t.Errorf("Erlang observer: %s, want %s", r, want)
			}
		})
		t.Run("Colony_"+how, func(t *testing.T) {
			n := startNode(t, port, dist.Config{Cookie: ck})
			v := victim()
			vn := actor.Atom(v.Name)
			// Spawn k processes on the victim through its controller.
			asker, replies := spawnDriven(t, n.sys)
			targets := make([]actor.Pid, k)
			for i := range targets {
				tag := n.MakeRef()
				do(t, n.sys, asker, func(c *actor.Context) {
					n.SendName(c.Self(), "ctl", vn, etf.Tuple{actor.Atom("ctl"), etf.Tuple{c.Self(), tag},
						etf.Tuple{actor.Atom("spawn"), false, actor.Atom("undefined")}})
				})
				m, _ := recv(t, replies, 10*time.Second).(etf.Tuple)
				if len(m) != 2 || m[0] != tag {
					t.Fatalf("spawn on the victim: %#v", m)
				}
				targets[i] = m[1].(actor.Pid)
			}
			var inboxes []chan any
			var ws []actor.Pid
			for _, target := range targets {
				w, in := spawnDriven(t, n.sys, actor.TrapExit())
				inboxes, ws = append(inboxes, in), append(ws, w)
				do(t, n.sys, w, func(c *actor.Context) {
					c.Link(target)
					c.Monitor(target)
				})
			}
			nw, nin := spawnDriven(t, n.sys)
			n.MonitorNode(nw, vn)
			// Every LINK and MONITOR_P has reached the victim once a
			// round trip through its controller has.
			tag := n.MakeRef()
			do(t, n.sys, asker, func(c *actor.Context) {
				n.SendName(c.Self(), "ctl", vn, etf.Tuple{actor.Atom("ctl"), etf.Tuple{c.Self(), tag},
					etf.Tuple{actor.Atom("spawn"), false, actor.Atom("undefined")}})
			})
			recv(t, replies, 10*time.Second)
			kill(v, how)
			var sets []string
			for _, in := range inboxes {
				var got []string
				for range 2 {
					switch m := recv(t, in, 20*time.Second).(type) {
					case actor.Exit:
						got = append(got, fmt.Sprintf("{exit,%v}", m.Reason))
					case actor.Down:
						got = append(got, fmt.Sprintf("{down,%v}", m.Reason))
					default:
						got = append(got, fmt.Sprintf("%#v", m))
					}
				}
				if got[0] > got[1] {
					got[0], got[1] = got[1], got[0]
				}
				sets = append(sets, "["+strings.Join(got, ",")+"]")
			}
			downs := 0
			if m, ok := recv(t, nin, 20*time.Second).(dist.NodeDown); ok && m.Node == vn {
				downs++
			}
			// Nothing more: each inbox is drained behind a message of
			// its own, sent after everything the loss produced.
			for i, in := range inboxes {
				mark := fmt.Sprint("mark", i)
				n.sys.Send(ws[i], mark)
				if m := recv(t, in, 10*time.Second); m != mark {
					t.Errorf("watcher %d got a second signal: %#v", i, m)
				}
			}
			uniq := map[string]bool{}
			for _, s := range sets {
				uniq[s] = true
			}
			var u []string
			for s := range uniq {
				u = append(u, s)
			}
			got := fmt.Sprintf("{[%s],%d}", strings.Join(u, ","), downs)
			if got != want {
				t.Errorf("Colony observer: %s, want %s (Erlang's)", got, want)
			}
		})
	}
}

// victimEnv names the environment variable that makes
// TestSigdiffVictimProcess a Colony node to be killed: "epmdport cookie".
const victimEnv = "COLONY_SIGDIFF_VICTIM"

// TestSigdiffVictimProcess is a helper process, not a test: run by
// TestColonyNodeKilledNoConnection in a process of its own, it is a Colony
// node with sigdiff's controller (which also takes halt: the process exits
// at once, Colony's erlang:halt()), prints its name, and runs until it is
// killed or its standard input closes.
func TestSigdiffVictimProcess(t *testing.T) {
	spec := os.Getenv(victimEnv)
	if spec == "" {
		t.Skip("a helper process of TestColonyNodeKilledNoConnection")
	}
	var port int
	var ck string
	if _, err := fmt.Sscan(spec, &port, &ck); err != nil {
		t.Fatalf("%s=%q: %v", victimEnv, spec, err)
	}
	n := startNode(t, port, dist.Config{Cookie: ck})
	if _, err := n.sys.Spawn(&haltable{sigCtl{n: n.Node}}, actor.Name("ctl")); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("victim %s\n", n.Name())
	io.Copy(io.Discard, os.Stdin)
}

// haltable is sigCtl that exits the process on halt.
type haltable struct{ sigCtl }

func (h *haltable) Receive(c *actor.Context, msg any) {
	if msg == actor.Atom("halt") {
		os.Exit(0)
	}
	h.sigCtl.Receive(c, msg)
}

// A Colony node (a process of its own) is killed, by its halt and by
// SIGKILL, while processes of an Erlang observer link to and monitor
// actors of it: the observer sees what it sees when the victim is an
// Erlang node (TestErlangNodeKilledNoConnection).
func TestColonyNodeKilledNoConnection(t *testing.T) {
	dir, port, ck := sigdiffSetup(t)
	want := "{[[{down,noconnection},{exit,noconnection}]],1}"
	for _, how := range []string{"halt", "sigkill"} {
		t.Run(how, func(t *testing.T) {
			obs := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSigdiffVictimProcess$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", victimEnv, port, ck))
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The first line names the node; the rest is drained until the
			// process exits.
			names := make(chan string, 1)
			exited := make(chan struct{})
			go func() {
				defer close(exited)
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if v, ok := strings.CutPrefix(sc.Text(), "victim "); ok {
						names <- v
					}
				}
				cmd.Wait()
			}()
			defer func() { cmd.Process.Kill(); <-exited }()
			var victim string
			select {
			case victim = <-names:
			case <-exited:
				t.Fatal("the victim process exited before it named its node")
			case <-time.After(30 * time.Second):
				t.Fatal("the victim process did not name its node")
			}
			if r := obs.Eval(fmt.Sprintf("S = sigdiff:kill_setup(%s, 10), ok.", atomLit(actor.Atom(victim)))); r != "ok" {
				t.Fatalf("kill_setup: %s", r)
			}
			switch how {
			case "halt":
				obs.Eval("{ctl, " + atomLit(actor.Atom(victim)) + "} ! halt, ok.")
			case "sigkill":
				cmd.Process.Kill()
			}
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				t.Fatal("the victim did not exit")
			}
			if r := obs.Eval("sigdiff:kill_trace(S)."); r != want {
				t.Errorf("Erlang observer of a Colony victim: %s, want %s", r, want)
			}
		})
	}
}

// Node monitors between a Colony and an Erlang node, both ways:
// net_kernel:monitor_nodes(true) and MonitorNodes see nodeup and nodedown,
// erlang:monitor_node/2 and MonitorNode one nodedown each (and no nodeup,
// as in OTP) when the connection goes.
func TestErlangNodeMonitors(t *testing.T) {
	n, erl := erlPair(t, dist.Config{})
	en := actor.Atom(erl.Name)
	colony := atomLit(n.Name())

	nodes, nodesIn := spawnDriven(t, n.sys)
	defer n.MonitorNodes(nodes)()
	if v := erl.Eval("net_kernel:monitor_nodes(true)."); v != "ok" {
		t.Fatalf("monitor_nodes: %s", v)
	}
	if err := n.Ping(ctxT(t, 10*time.Second), en); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, nodesIn, 10*time.Second); m != (dist.NodeUp{Node: en}) {
		t.Errorf("MonitorNodes: %#v", m)
	}
	if v := erl.Eval("receive {nodeup, N1} -> N1 after 10000 -> timeout end."); v != colony {
		t.Errorf("Erlang's monitor_nodes: %s", v)
	}
	one, oneIn := spawnDriven(t, n.sys)
	n.MonitorNode(one, en)
	if v := erl.Eval("monitor_node(" + colony + ", true)."); v != "true" {
		t.Fatalf("monitor_node: %s", v)
	}
	// The monitor_node is in place on the Erlang side once a round trip
	// has gone through it; then the connection goes.
	erl.Eval("net_adm:ping(" + colony + ").")
	if !n.Disconnect(en) {
		t.Fatal("not connected")
	}
	if m, ok := recv(t, nodesIn, 10*time.Second).(dist.NodeDown); !ok || m.Node != en {
		t.Errorf("MonitorNodes: %#v", m)
	}
	if m, ok := recv(t, oneIn, 10*time.Second).(dist.NodeDown); !ok || m.Node != en {
		t.Errorf("MonitorNode: %#v", m)
	}
	if v := erl.Eval("[receive {nodedown, N2} -> N2 after 10000 -> timeout end || _ <- [1, 2]]."); v != "["+colony+","+colony+"]" {
		t.Errorf("Erlang's nodedowns: %s", v)
	}
	if v := erl.Eval("receive Extra -> Extra after 0 -> none end."); v != "none" {
		t.Errorf("Erlang got more: %s", v)
	}
	roundTripErl(t, n, erl)
	noMessage(t, oneIn)
}

// roundTripErl waits for a ping of the Erlang node through a new
// connection (so a monitor_node of the old one has had its chance to fire
// twice).
func roundTripErl(t *testing.T, n *testNode, erl *erltest.Node) {
	t.Helper()
	if err := n.Ping(ctxT(t, 10*time.Second), actor.Atom(erl.Name)); err != nil {
		t.Fatal(err)
	}
}
