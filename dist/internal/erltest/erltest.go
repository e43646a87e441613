// Package erltest starts the real Erlang programs (epmd, erl) that the
// distribution tests talk to, on loopback only, bounded in time, and stops
// them when the test ends.
//
// Conventions (those of tests/erldiff): a test that needs Erlang and does
// not find it skips with a loud message, unless the environment variable CI
// is set, when it fails. Every epmd is private to its test, on a free port
// of 127.0.0.1 (never the default 4369, which another test or a user's
// node may hold); every erl node has a long name at 127.0.0.1, is told that
// epmd's port (ERL_EPMD_PORT) and address (ERL_EPMD_ADDRESS), never starts
// an epmd of its own (-start_epmd false), and runs in its own process group
// that is killed at the end.
package erltest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/internal/erlenv"
)

// Need skips t (loudly) or, with CI set, fails it when prog is not on PATH.
func Need(t testing.TB, progs ...string) {
	t.Helper()
	for _, prog := range progs {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("erltest: %s is not on PATH and CI is set: CI must install erlang-nox", prog)
			}
			t.Skipf("erltest: *** SKIPPING: %s is not on PATH (apt-get install erlang-nox); with CI set this is a failure ***", prog)
		}
	}
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// EPMD starts a private epmd on 127.0.0.1 (not daemonized) and returns its
// port once it accepts connections; it is killed when t ends.
func EPMD(t testing.TB) int {
	t.Helper()
	Need(t, "epmd")
	for attempt := 0; ; attempt++ {
		port := FreePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, "epmd", "-port", strconv.Itoa(port), "-address", "127.0.0.1")
		cmd.Env = append(os.Environ(), "ERL_EPMD_ADDRESS=127.0.0.1", "ERL_EPMD_PORT="+strconv.Itoa(port))
		groupKill(cmd)
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatalf("erltest: epmd: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		stop := func() { cancel(); <-exited }
		if waitListening(port, exited, 5*time.Second) {
			t.Cleanup(stop)
			return port
		}
		stop()
		if attempt == 3 {
			t.Fatalf("erltest: epmd on port %d did not start", port)
		}
	}
}

func waitListening(port int, exited <-chan struct{}, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// Node is a running erl node driven through its standard input: Eval sends
// it Erlang expressions and reads back their value.
type Node struct {
	Name string
	t    testing.TB
	cmd  *exec.Cmd
	in   *os.File
	mu   sync.Mutex // one Eval at a time
	out  chan string
	done chan struct{}
	logs *strings.Builder
	lmu  *sync.Mutex
}

// The loop the node runs: read expressions from stdin (terminated by
// ".\n"), evaluate them with the bindings so far, print "=> " and the value
// (~0p on one line) or "=> {eval_error, Class, Reason}"; halt at the end of
// the input (or an error reading it).
const loop = `R = fun R(B) -> case io:parse_erl_exprs('') of ` +
	`{ok, E, _} -> B2 = try erl_eval:exprs(E, B) of {value, V, NB} -> io:format("=> ~0p~n", [V]), NB ` +
	`catch C:X -> io:format("=> ~0p~n", [{eval_error, C, X}]), B end, R(B2); ` +
	`{error, _, _} = Err -> io:format("=> ~0p~n", [{parse_error, Err}]), R(B); _ -> halt() end end, R(erl_eval:new_bindings()).`

// Erl starts `erl -name name -setcookie cookie` registered with the epmd at
// epmdPort, with extra arguments (e.g. "-kernel", "net_ticktime", "4",
// "-pa", dir), and returns once it evaluates expressions. It is killed
// when t ends.
func Erl(t testing.TB, epmdPort int, name, cookie string, extra ...string) *Node {
	t.Helper()
	Need(t, "erl")
	args := append([]string{"-noshell", "-name", name, "-setcookie", cookie, "-start_epmd", "false",
		"-kernel", "inet_dist_use_interface", "{127,0,0,1}"}, extra...)
	args = append(args, "-eval", loop)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "erl", args...)
	cmd.Env = erlenv.Env("ERL_EPMD_ADDRESS=127.0.0.1", "ERL_EPMD_PORT="+strconv.Itoa(epmdPort))
	groupKill(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stdin = inR
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	n := &Node{Name: name, t: t, cmd: cmd, in: inW, out: make(chan string, 64), done: make(chan struct{}),
		logs: &strings.Builder{}, lmu: &sync.Mutex{}}
	stopRead := make(chan struct{})
	cmd.Stderr = logWriter{n}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("erltest: erl: %v", err)
	}
	inR.Close()
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "=> "); ok {
				select {
				case n.out <- v:
				case <-stopRead: // the test has ended: nobody reads values
				}
			} else {
				n.log(line)
			}
		}
		cmd.Wait()
		close(n.done)
	}()
	t.Cleanup(func() {
		inW.Close()
		close(stopRead)
		cancel()
		<-n.done
		n.lmu.Lock()
		if s := n.logs.String(); s != "" && t.Failed() {
			t.Logf("erltest: %s printed:\n%s", name, s)
		}
		n.lmu.Unlock()
	})
	if v := n.Eval("node()."); v != quoteAtom(name) {
		t.Fatalf("erltest: %s says node() = %s", name, v)
	}
	return n
}

func quoteAtom(s string) string { return "'" + s + "'" }

type logWriter struct{ n *Node }

func (w logWriter) Write(p []byte) (int, error) {
	w.n.log(string(p))
	return len(p), nil
}

func (n *Node) log(s string) {
	n.lmu.Lock()
	n.logs.WriteString(s)
	if !strings.HasSuffix(s, "\n") {
		n.logs.WriteByte('\n')
	}
	n.lmu.Unlock()
}

// Logs is what the node printed other than Eval's values.
func (n *Node) Logs() string {
	n.lmu.Lock()
	defer n.lmu.Unlock()
	return n.logs.String()
}

// Eval evaluates exprs (Erlang expressions ending with ".") on the node and
// returns the value as ~0p prints it. Bindings persist across calls. If no
// value comes within 30 s it marks the node's test failed and returns
// "<no value: why>" (it does not stop the test: it may be a subtest's).
func (n *Node) Eval(exprs string) string {
	n.t.Helper()
	v, err := n.EvalTimeout(exprs, 30*time.Second)
	if err != nil {
		n.t.Errorf("erltest: %s: %s: %v", n.Name, exprs, err)
		return "<no value: " + err.Error() + ">"
	}
	return v
}

// EvalTimeout is Eval with an error instead of a failure.
func (n *Node) EvalTimeout(exprs string, d time.Duration) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, err := fmt.Fprintf(n.in, "%s\n", exprs); err != nil {
		return "", err
	}
	select {
	case v := <-n.out:
		return v, nil
	case <-n.done:
		return "", fmt.Errorf("node exited")
	case <-time.After(d):
		return "", fmt.Errorf("no value within %v", d)
	}
}

// Pid is the node's OS process id (beam.smp runs under erl's exec).
func (n *Node) Pid() int { return n.cmd.Process.Pid }

// Signal sends sig to the node's process group (SIGSTOP freezes it, with
// its sockets open; SIGCONT resumes it; SIGKILL kills it).
func (n *Node) Signal(sig syscall.Signal) error { return signalGroup(n.cmd, sig) }

// Done is closed once the node has exited.
func (n *Node) Done() <-chan struct{} { return n.done }

// Compile compiles the Erlang module source with erlc into a temporary
// directory and returns the directory (for erl's -pa).
func Compile(t testing.TB, module, source string) string {
	t.Helper()
	Need(t, "erlc")
	dir := t.TempDir()
	src := filepath.Join(dir, module+".erl")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "erlc", "-o", dir, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("erltest: erlc %s: %v\n%s", module, err, out)
	}
	return dir
}
