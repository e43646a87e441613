//go:build unix

package disttest

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// MainOrChild is a TestMain for a test binary that is also its own worker
// node: with the environment variable env set it runs child (with the
// command-line arguments) and exits with its status; otherwise it runs the
// tests under goleak's check (goleak.VerifyTestMain).
func MainOrChild(m *testing.M, env string, child func(args []string) int) {
	if os.Getenv(env) != "" {
		os.Exit(child(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

// Child is a worker node in a process of its own: this test binary run
// again with an environment variable set (see MainOrChild), in its own
// process group, its output kept (the first 64 KiB), its standard input a
// pipe that stays open until Kill (a child may end when it closes).
type Child struct {
	Name  string
	cmd   *exec.Cmd
	stdin *os.File
	done  chan struct{}
	out   Output
}

// StartChild starts this test binary with env=1 in its environment and
// args as its arguments; name names it in messages.
func StartChild(t testing.TB, name, env string, args ...string) *Child {
	t.Helper()
	c := &Child{Name: name, done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], args...)
	c.cmd.Env = append(os.Environ(), env+"=1")
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stdin, c.stdin = r, w
	if err := c.cmd.Start(); err != nil {
		r.Close()
		w.Close()
		t.Fatal(err)
	}
	r.Close()
	go func() { c.cmd.Wait(); close(c.done) }()
	return c
}

// Kill SIGKILLs the child's process group, waits (up to 10 s) for it to
// exit and closes its standard input. Calling it again does no harm.
func (c *Child) Kill(t testing.TB) {
	t.Helper()
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s did not exit after SIGKILL", c.Name)
	}
	c.stdin.Close()
}

// Alive reports whether the child's process has not exited yet.
func (c *Child) Alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Output is what the child has written so far to its standard output and
// error.
func (c *Child) Output() string { return c.out.String() }
