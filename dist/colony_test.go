package dist_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/internal/erltest"
)

// Two Colony nodes in one process connect through epmd, ping, and exchange
// messages by pid, by name and by alias.
func TestTwoColonyNodes(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	if err := a.Ping(ctxT(t, 10*time.Second), b.Name()); err != nil {
		t.Fatalf("a pings b: %v", err)
	}
	if err := b.Ping(ctxT(t, 10*time.Second), a.Name()); err != nil {
		t.Fatalf("b pings a: %v", err)
	}
	if got := a.Nodes(); len(got) != 1 || got[0] != b.Name() {
		t.Errorf("a.Nodes() = %v", got)
	}
	eventually(t, 5*time.Second, "b sees a", func() bool { return len(b.Nodes()) == 1 })

	// By name: b's echo server, from an actor of a.
	if _, err := b.sys.Spawn(&echo{}, actor.Name("echo")); err != nil {
		t.Fatal(err)
	}
	self, inbox := spawnCollector(t, a.sys, 16)
	if err := a.SendName(self, "echo", b.Name(), etf.Tuple{self, "by name"}); err != nil {
		t.Fatal(err)
	}
	if v := recv(t, inbox, 10*time.Second); v != "by name" {
		t.Errorf("echo by name: %#v", v)
	}

	// By pid: b learns a's pid from a message, and a b actor's pid comes
	// back the same way; sys.Send routes a remote pid over the wire.
	bpid, bInbox := spawnCollector(t, b.sys, 16, actor.Name("sink"))
	a.SendName(self, "sink", b.Name(), etf.Tuple{actor.Atom("hello"), self})
	m := recv(t, bInbox, 10*time.Second).(etf.Tuple)
	if m[0] != actor.Atom("hello") {
		t.Fatalf("sink got %#v", m)
	}
	apidAtB := m[1].(actor.Pid)
	if !apidAtB.IsRemote() {
		t.Fatalf("a's pid at b is not remote: %v", apidAtB)
	}
	if err := b.sys.Send(apidAtB, etf.Tuple{actor.Atom("from_b"), bpid}); err != nil {
		t.Fatal(err)
	}
	m = recv(t, inbox, 10*time.Second).(etf.Tuple)
	bpidAtA := m[1].(actor.Pid)
	if id, ok := bpidAtA.Remote(); !ok || id.Node != b.Name() || id.Creation != b.Creation() {
		t.Fatalf("b's pid at a: %v %+v", bpidAtA, id)
	}
	a.sys.Send(bpidAtA, 42)
	if v := recv(t, bInbox, 10*time.Second); v != 42 {
		t.Errorf("by pid: %#v", v)
	}

	// By alias.
	alias := b.Alias(bpid)
	if err := a.SendAlias(self, alias, "via alias"); err != nil {
		t.Fatal(err)
	}
	if v := recv(t, bInbox, 10*time.Second); v != "via alias" {
		t.Errorf("by alias: %#v", v)
	}
	if !b.Unalias(alias) {
		t.Error("Unalias of an active alias")
	}
	a.SendAlias(self, alias, "dropped")
	a.SendName(self, "sink", b.Name(), "after")
	if v := recv(t, bInbox, 10*time.Second); v != "after" {
		t.Errorf("a message to an inactive alias was delivered: %#v", v)
	}
}

func TestOrderAndLargeMessages(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	_, inbox := spawnCollector(t, b.sys, 20000, actor.Name("sink"))
	self, _ := spawnCollector(t, a.sys, 1)
	const N = 10000
	for i := range N {
		if err := a.SendName(self, "sink", b.Name(), i); err != nil {
			t.Fatal(err)
		}
	}
	for i := range N {
		if v := recv(t, inbox, 10*time.Second); v != i {
			t.Fatalf("message %d is %#v", i, v)
		}
	}
	// A 3 MiB binary goes as fragments (both announce FRAGMENTS) and
	// arrives whole, between two small messages, in order.
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
	a.SendName(self, "sink", b.Name(), "before")
	a.SendName(self, "sink", b.Name(), big)
	a.SendName(self, "sink", b.Name(), "after")
	if v := recv(t, inbox, 10*time.Second); v != "before" {
		t.Fatalf("got %#v", v)
	}
	if v, _ := recv(t, inbox, 10*time.Second).(string); v != string(big) {
		t.Fatalf("large message: %d bytes", len(v))
	}
	if v := recv(t, inbox, 10*time.Second); v != "after" {
		t.Fatalf("got %#v", v)
	}
}

func TestWrongCookieColony(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{Cookie: "one"})
	b := startNode(t, port, dist.Config{Cookie: "two"})
	if err := a.Ping(ctxT(t, 10*time.Second), b.Name()); !errors.Is(err, dist.ErrPang) {
		t.Fatalf("ping with a wrong cookie: %v", err)
	}
	eventually(t, 5*time.Second, "b's log line", func() bool { return b.logs.has("invalid challenge reply") })
	if len(a.Nodes()) != 0 || len(b.Nodes()) != 0 {
		t.Errorf("connected: %v %v", a.Nodes(), b.Nodes())
	}
}

// Both nodes connect to each other at once: one connection results, and
// both pings succeed.
func TestSimultaneousConnect(t *testing.T) {
	port := testEPMD(t)
	for range 5 {
		a := startNode(t, port, dist.Config{})
		b := startNode(t, port, dist.Config{})
		errs := make(chan error, 2)
		go func() { errs <- a.Ping(ctxT(t, 10*time.Second), b.Name()) }()
		go func() { errs <- b.Ping(ctxT(t, 10*time.Second), a.Name()) }()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if len(a.Nodes()) != 1 || len(b.Nodes()) != 1 {
			t.Fatalf("nodes %v %v", a.Nodes(), b.Nodes())
		}
	}
}

// A hidden node's connection is in HiddenNodes, not Nodes, on both ends;
// MonitorNodes does not report it and MonitorAllNodes does, with Hidden
// set, as net_kernel:monitor_nodes(true) and monitor_nodes(true,
// [{node_type, all}]) do.
func TestHiddenNode(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{Hidden: true})
	b := startNode(t, port, dist.Config{})
	visible, visibleIn := spawnCollector(t, b.sys, 8)
	all, allIn := spawnCollector(t, b.sys, 8)
	defer b.MonitorNodes(visible)()
	defer b.MonitorAllNodes(all)()
	if err := a.Ping(ctxT(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	if len(a.Nodes()) != 0 || len(a.HiddenNodes()) != 1 {
		t.Errorf("a: nodes %v hidden %v", a.Nodes(), a.HiddenNodes())
	}
	if m := recv(t, allIn, 5*time.Second); m != (dist.NodeUp{Node: a.Name(), Hidden: true}) {
		t.Errorf("MonitorAllNodes: %#v, want a's hidden NodeUp", m)
	}
	if len(b.Nodes()) != 0 || len(b.HiddenNodes()) != 1 {
		t.Errorf("b: nodes %v hidden %v", b.Nodes(), b.HiddenNodes())
	}
	if err := a.Stop(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if m, ok := recv(t, allIn, 5*time.Second).(dist.NodeDown); !ok || m.Node != a.Name() || !m.Hidden {
		t.Errorf("MonitorAllNodes: %#v, want a's hidden NodeDown", m)
	}
	// A visible connection after it: the first event MonitorNodes reports
	// (events are delivered to every subscriber in the order they happen).
	c := startNode(t, port, dist.Config{})
	if err := c.Ping(ctxT(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, visibleIn, 5*time.Second); m != (dist.NodeUp{Node: c.Name()}) {
		t.Errorf("MonitorNodes: %#v, want c's NodeUp (and nothing of the hidden a)", m)
	}
	if m := recv(t, allIn, 5*time.Second); m != (dist.NodeUp{Node: c.Name()}) {
		t.Errorf("MonitorAllNodes: %#v, want c's NodeUp", m)
	}
}

func TestNodeDownReported(t *testing.T) {
	port := testEPMD(t)
	downs := make(chan actor.Atom, 4)
	a := startNode(t, port, dist.Config{OnNodeDown: func(n actor.Atom, _ error) { downs <- n }})
	b := startNode(t, port, dist.Config{})
	watcher, events := spawnCollector(t, a.sys, 8)
	stop := a.MonitorNodes(watcher)
	defer stop()
	if err := a.Connect(ctxT(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	if v := recv(t, events, 5*time.Second); v != (dist.NodeUp{Node: b.Name()}) {
		t.Fatalf("got %#v", v)
	}
	if err := b.Stop(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if v, ok := recv(t, events, 5*time.Second).(dist.NodeDown); !ok || v.Node != b.Name() {
		t.Fatalf("got %#v", v)
	}
	if n := <-downs; n != b.Name() {
		t.Errorf("OnNodeDown(%s)", n)
	}
	if err := a.Ping(ctxT(t, 10*time.Second), b.Name()); !errors.Is(err, dist.ErrPang) {
		t.Errorf("ping of a stopped node: %v", err)
	}
}

// The in-process registrar: with EPMDServe the first node serves it, and a
// second node (EPMDExternal) registers with it and finds the first.
func TestServedRegistrar(t *testing.T) {
	port := freePort(t)
	a := startNode(t, port, dist.Config{EPMD: dist.EPMDServe})
	b := startNode(t, port, dist.Config{EPMD: dist.EPMDExternal})
	if err := b.Ping(ctxT(t, 10*time.Second), a.Name()); err != nil {
		t.Fatal(err)
	}
}

// EPMDAuto on a port where nothing listens and with no daemon to run
// serves the registrar itself.
func TestAutoServesRegistrar(t *testing.T) {
	port := freePort(t)
	a := startNode(t, port, dist.Config{EPMDDaemon: "-"})
	b := startNode(t, port, dist.Config{EPMD: dist.EPMDExternal})
	if err := a.Ping(ctxT(t, 10*time.Second), b.Name()); err != nil {
		t.Fatal(err)
	}
	if !a.logs.has("serving an EPMD-compatible registrar in-process") {
		t.Errorf("no log line for the served registrar:\n%s", a.logs)
	}
}

// System.Shutdown stops the node: its connections close (the peer sees
// the node down), it leaves EPMD, and Shutdown returns only after the
// node's goroutines (goleak checks what is left at the end).
func TestShutdownStopsNode(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	watcher, events := spawnCollector(t, b.sys, 4)
	defer b.MonitorNodes(watcher)()
	if err := b.Ping(ctxT(t, 10*time.Second), a.Name()); err != nil {
		t.Fatal(err)
	}
	recv(t, events, 5*time.Second) // NodeUp
	if err := a.sys.Shutdown(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	default:
		t.Fatal("the node did not stop with its System")
	}
	if v, ok := recv(t, events, 5*time.Second).(dist.NodeDown); !ok || v.Node != a.Name() {
		t.Fatalf("got %#v", v)
	}
	if err := b.Ping(ctxT(t, 10*time.Second), a.Name()); !errors.Is(err, dist.ErrPang) {
		t.Errorf("ping of a node whose System shut down: %v", err)
	}
}

// EPMDAuto with no epmd on the port runs `epmd -daemon` there, as erl
// does, and registers with it; the daemon is killed at the end.
func TestAutoStartsDaemon(t *testing.T) {
	erltest.Need(t, "epmd")
	port := freePort(t)
	t.Cleanup(func() { // after the node has left it (cleanups run last first)
		exec.Command("epmd", "-port", strconv.Itoa(port), "-kill").Run()
	})
	a := startNode(t, port, dist.Config{})
	if !a.logs.has("-daemon on port " + strconv.Itoa(port)) {
		t.Fatalf("no daemon started:\n%s", a.logs)
	}
	b := startNode(t, port, dist.Config{EPMD: dist.EPMDExternal})
	if err := b.Ping(ctxT(t, 10*time.Second), a.Name()); err != nil {
		t.Fatal(err)
	}
}
