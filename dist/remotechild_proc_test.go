//go:build unix

package dist_test

// A supervised child on a node that is an OS process of its own, killed
// by SIGKILL: the test binary is run again as that node.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/supervisor"
)

// Set in the environment of the test binary run as the child's node.
const (
	procNodeEnv = "COLONY_REMOTECHILD_NODE" // the node's name
	procEPMDEnv = "COLONY_REMOTECHILD_EPMD" // the epmd port
)

// procChild is the behaviour the node process runs for the supervisor: it
// traps exits, says "started" on stdout, and on an exit signal says
// "ended <reason>" and stops with it.
type procChild struct {
	out *lockedStdout
}

type lockedStdout struct{ mu sync.Mutex }

func (l *lockedStdout) say(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

func (p *procChild) Init(c *actor.Context) {
	c.TrapExit(true)
	p.out.say("started")
}

func (p *procChild) Receive(c *actor.Context, msg any) {
	if e, ok := msg.(actor.Exit); ok {
		p.out.say("ended %v", e.Reason)
		c.Stop(e.Reason)
	}
}

// procNodeMain is the node process: a node that runs procChild for its
// peers until its stdin closes (the test ended) or it is killed.
func procNodeMain(name string) {
	port, err := strconv.Atoi(os.Getenv(procEPMDEnv))
	if err != nil {
		fmt.Println("bad epmd port:", err)
		os.Exit(2)
	}
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		fmt.Println("actor.Start:", err)
		os.Exit(2)
	}
	n, err := dist.Start(sys, dist.Config{Name: name, Cookie: "cookie", EPMDPort: port})
	if err != nil {
		fmt.Println("dist.Start:", err)
		os.Exit(2)
	}
	out := &lockedStdout{}
	if err := n.RegisterSpawn("procchild", func([]any) (actor.Actor, error) { return &procChild{out: out}, nil }); err != nil {
		fmt.Println("RegisterSpawn:", err)
		os.Exit(2)
	}
	out.say("ready")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0) // not the test's exit: no leak check of a node process
}

// procNode is a running node process: its stdout lines on lines.
type procNode struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan struct{} // closed when its stdout has ended
}

func startProcNode(t *testing.T, name string, port int) *procNode {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRemoteChildNodeKilled$")
	cmd.Env = append(os.Environ(), procNodeEnv+"="+name, procEPMDEnv+"="+strconv.Itoa(port))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &procNode{cmd: cmd, stdin: stdin, lines: make(chan string, 64), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // the test reads what it waits for; the rest may go
			}
		}
	}()
	t.Cleanup(func() { p.kill(t) })
	p.expect(t, "ready")
	return p
}

// expect waits for the line want; other lines are skipped.
func (p *procNode) expect(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case l := <-p.lines:
			if l == want {
				return
			}
			if !strings.HasPrefix(l, "PASS") && !strings.HasPrefix(l, "ok") {
				t.Logf("node process: %s", l)
			}
		case <-p.done:
			t.Fatalf("the node process ended before it said %q", want)
		case <-deadline:
			t.Fatalf("the node process did not say %q within %v", want, waitLong)
		}
	}
}

// kill SIGKILLs the process and waits for it; a second kill is a no-op.
func (p *procNode) kill(t *testing.T) {
	if p.cmd.ProcessState != nil {
		return
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(waitLong):
		t.Errorf("the node process's stdout did not end after SIGKILL")
	}
	p.stdin.Close()
	p.cmd.Wait()
}

// The child's node is a process of its own, SIGKILLed: the supervisor sees
// noconnection and restarts the child on the node's next incarnation (a
// new process under the same name); its stop then runs the child's
// terminate there, with shutdown.
func TestRemoteChildNodeKilled(t *testing.T) {
	if name := os.Getenv(procNodeEnv); name != "" {
		procNodeMain(name)
		return
	}
	if testing.Short() {
		t.Skip("starts node processes")
	}
	port := testEPMD(t)
	var reports sync.Map
	a := countingNode(t, port, &reports)
	bName := uniqueName("proc")
	b := startProcNode(t, bName, port)
	sevs := make(chan supEvent, 16)
	sup := startSup(t, a, sevs, supervisor.Spec{
		Intensity: 1 << 30, Period: time.Minute, // every failed try while b is away counts
		Children: []supervisor.ChildSpec{{ID: "w", Start: a.RemoteChild(actor.Atom(bName), "procchild")}},
	})
	b.expect(t, "started")
	first := whichPid(t, a.sys, sup, "w")
	if id, ok := first.Remote(); !ok || id.Node != actor.Atom(bName) {
		t.Fatalf("the child %v is not on %s", first, bName)
	}

	b.kill(t)
	if e := nextSup(t, sevs); e.kind != "exited" || e.old != first || e.reason != actor.Reason(actor.NoConnection) || !e.restart {
		t.Fatalf("supervisor event %+v, want %v exited noconnection, to restart", e, first)
	}
	unregistered(t, port, actor.Atom(bName))
	b2 := startProcNode(t, bName, port)
	b2.expect(t, "started")
	e := nextSup(t, sevs)
	if e.kind != "restarted" || e.id != "w" { // old is zero: the restart that worked was a retry
		t.Fatalf("supervisor event %+v, want w restarted", e)
	}
	if id, ok := e.new.Remote(); !ok || id.Node != actor.Atom(bName) || e.new == first {
		t.Fatalf("restarted as %v, want a new pid on %s", e.new, bName)
	}
	if n, ok := reports.Load("start_error"); ok {
		t.Logf("%d restarts failed while the node was away", n.(interface{ Load() int64 }).Load())
	}

	w := watch(t, a.sys, sup)
	a.sys.Exit(sup, actor.Shutdown)
	b2.expect(t, "ended shutdown")
	waitDead(t, w, actor.Shutdown)
}
