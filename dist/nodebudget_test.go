package dist_test

// The node identity budget (nodebudget.go) through real connections: a
// peer that restarts again and again, and names made-up third nodes, is
// served for as long as it stays within its budget, and the identities it
// introduced are reclaimed once nothing holds them; a peer that introduces
// identities faster than the budget is disconnected, logged and counted,
// and the links and monitors of other peers do not fire.

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/handshake"
)

// soak is set by COLONY_SOAK (.ci/run sets it): soak-sized loops.
var soak = os.Getenv("COLONY_SOAK") != ""

// handshakeAs is a raw client that passed the handshake as node name with
// creation.
func handshakeAs(t *testing.T, n *testNode, name string, creation uint32) net.Conn {
	t.Helper()
	c := dialRaw(t, n)
	cfg := &handshake.Config{Name: name, Creation: creation, Cookie: "cookie",
		Flags: handshake.Mandatory | handshake.Published | handshake.Fragments}
	if _, err := handshake.Dial(c, cfg, string(n.Name()), nil); err != nil {
		t.Fatalf("raw handshake as %s/%d: %v", name, creation, err)
	}
	return c
}

// madeUp returns k pids of nodes nobody has met: prefix0@h .. prefix<k-1>@h,
// with creation 1.
func madeUp(t *testing.T, prefix string, k int) []any {
	t.Helper()
	pids := make([]any, k)
	for i := range pids {
		p, err := actor.RemotePid(actor.RemoteID{Node: actor.Atom(fmt.Sprintf("%s%d@h", prefix, i)), Creation: 1, ID: uint32(i), Serial: 1})
		if err != nil {
			t.Fatal(err)
		}
		pids[i] = p
	}
	return pids
}

// sendPids is a SEND frame of the list pids to the local pid to. Encoding
// makes the pids' identities here; the caller drops them and collects
// before sending, so that the node meets them anew in the frame.
func sendPids(t *testing.T, to actor.Pid, pids []any) []byte {
	return frame([]byte{112}, term(t, etf.Tuple{2, actor.Atom(""), to}), term(t, pids))
}

// collectIdentities runs the GC until the process holds at most max node
// identities.
func collectIdentities(t *testing.T, max int) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("at most %d node identities held", max), func() bool {
		runtime.GC()
		return actor.RemoteNodes() <= max
	})
}

func TestNodeIdentityFloodClosesOnlyItsConnection(t *testing.T) {
	const burst = 64
	n, good := badInputNodes(t, dist.Config{NodeIdentityBurst: burst, NodeIdentityRate: 1})
	termEnc = n.Encoder()
	// A link and monitors between the good peer and the node, both ways.
	na, nInbox := spawnDriven(t, n.sys)
	gb, gInbox := spawnDriven(t, good.sys)
	do(t, good.sys, gb, func(c *actor.Context) {
		c.TrapExit(true)
		if err := c.Link(remoteOf(t, n, na)); err != nil {
			t.Error(err)
		}
		if _, err := c.Monitor(remoteOf(t, n, na)); err != nil {
			t.Error(err)
		}
	})
	do(t, n.sys, na, func(c *actor.Context) {
		c.TrapExit(true)
		if _, err := c.Monitor(remoteOf(t, good, gb)); err != nil {
			t.Error(err)
		}
	})
	sink, inbox := spawnCollector(t, n.sys, 4)

	c := handshakeAs(t, n, uniqueName("flood"), 7)
	prefix := uniqueName("ghost")
	within, past := sendPids(t, sink, madeUp(t, prefix+"a", burst/2)), sendPids(t, sink, madeUp(t, prefix+"b", burst))
	collectIdentities(t, actor.RemoteNodes()-3*burst/2) // none of the made-up nodes is known

	// Within the budget: delivered, each pid naming its made-up node.
	c.Write(within)
	got, _ := recv(t, inbox, 10*time.Second).([]any)
	if len(got) != burst/2 {
		t.Fatalf("delivered %d pids, want %d", len(got), burst/2)
	}
	for i, v := range got {
		if id, _ := v.(actor.Pid).Remote(); string(id.Node) != fmt.Sprintf("%sa%d@h", prefix, i) {
			t.Fatalf("pid %d names %v", i, id)
		}
	}
	// Past it: the connection is closed, logged and counted.
	c.Write(past)
	closedByNode(t, c)
	eventually(t, 10*time.Second, "the log line", func() bool { return n.logs.has("past its budget") })
	if s := n.Stats(); s.NodeBudgetExceeded != 1 {
		t.Errorf("Stats.NodeBudgetExceeded = %d, want 1", s.NodeBudgetExceeded)
	}
	// Pids in a trace token, which the fast path skips, spend the budget
	// too.
	c = handshakeAs(t, n, uniqueName("flood"), 8)
	tt := frame([]byte{112}, term(t, etf.Tuple{12, actor.Atom(""), sink, madeUp(t, prefix+"c", burst+1)}), term(t, 1))
	collectIdentities(t, actor.RemoteNodes()-burst-1)
	c.Write(tt)
	closedByNode(t, c)
	eventually(t, 10*time.Second, "the second refusal counted", func() bool { return n.Stats().NodeBudgetExceeded == 2 })
	// The other peer is unharmed: it still talks to the node, and neither
	// its link nor the monitors fired.
	stillWorks(t, n, good)
	roundTrip(t, good, n)
	roundTrip(t, n, good)
	noMessage(t, gInbox)
	noMessage(t, nInbox)
	if l, m, _ := monitorCounts(n.sys, na); l != 1 || m != 1 {
		t.Errorf("the node's actor has %d links and %d monitors, want 1 and 1", l, m)
	}
}

// A peer restarting with a new creation each time, each incarnation naming
// made-up third nodes: the node keeps accepting it, and once the
// connections are gone the identities are reclaimed.
func TestNodeIdentityChurnThroughConnections(t *testing.T) {
	restarts, third := 40, 8
	if soak {
		restarts = 300
	}
	n, good := badInputNodes(t, dist.Config{NodeIdentityBurst: 2 * third, NodeIdentityRate: 1})
	termEnc = n.Encoder()
	sink, inbox := spawnCollector(t, n.sys, 1)
	name := uniqueName("restarting")
	runtime.GC()
	base := actor.RemoteNodes()
	for i := range restarts {
		msg := sendPids(t, sink, madeUp(t, fmt.Sprintf("%s-third%d-", name, i), third))
		c := handshakeAs(t, n, name, uint32(i+1))
		c.Write(msg)
		got, _ := recv(t, inbox, 10*time.Second).([]any)
		if len(got) != third {
			t.Fatalf("incarnation %d: delivered %d pids, want %d", i+1, len(got), third)
		}
		c.Close()
		eventually(t, 10*time.Second, "the node to drop the connection", func() bool {
			return !slices.Contains(n.Nodes(), actor.Atom(name))
		})
	}
	// Everything the incarnations introduced (their own identities and
	// their third nodes, restarts*(third+1)) is given back.
	collectIdentities(t, base+2)
	t.Logf("%d incarnations, %d identities met; held after collection: %d (before: %d)",
		restarts, restarts*(third+1), actor.RemoteNodes(), base)
	if s := n.Stats(); s.NodeBudgetExceeded != 0 {
		t.Errorf("a peer within its budget was refused: NodeBudgetExceeded = %d", s.NodeBudgetExceeded)
	}
	stillWorks(t, n, good)
}
