//go:build linux

package acceptor_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/io/acceptor"
)

const emfileChild = "ACCEPTOR_EMFILE_CHILD"

// TestAcceptEMFILE: out of file descriptors, an accept fails; the
// listener reports it, pauses and accepts again, and the connection that
// waited in the backlog meanwhile is served once descriptors are free
// (it is not lost, and the listener does not crash). The server runs in a
// child process whose descriptor limit it lowers, so that this process's
// clients and the other tests are not starved.
func TestAcceptEMFILE(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcceptEMFILEServer$", "-test.v")
	cmd.Env = append(os.Environ(), emfileChild+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	defer func() {
		stdin.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server process: %v", err)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Error("server process did not exit")
		}
	}()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		done <- cmd.Wait()
	}()
	next := func(prefix string) string {
		t.Helper()
		for {
			select {
			case s, ok := <-lines:
				if !ok {
					t.Fatalf("server process ended before %q", prefix)
				}
				t.Log("server: ", s)
				if strings.HasPrefix(s, prefix) {
					return strings.TrimPrefix(s, prefix)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no %q from the server process", prefix)
			}
		}
	}
	addr := next("ADDR ")
	// The server has no descriptor to spare: both clients wait in the
	// backlog. Freed one, it serves the first; its accept of the second
	// then fails, with no connection left to arrive (and the second writes
	// nothing: its data would not wake the listener either), so only a
	// retry of the listener's own accept can serve it.
	c1 := dialAddr(t, addr)
	c2 := dialAddr(t, addr)
	if s := next("LOG "); !strings.Contains(s, "accept failed") {
		t.Fatalf("server log: %q", s)
	}
	fmt.Fprintln(stdin, "free one")
	next("FREED")
	if got := c1.read(); got != "hello" {
		t.Fatalf("first client: %q", got)
	}
	if s := next("LOG "); !strings.Contains(s, "accept failed") {
		t.Fatalf("server log: %q", s)
	}
	fmt.Fprintln(stdin, "raise")
	if got := c2.read(); got != "hello" {
		t.Fatalf("the client that waited: %q", got)
	}
	if got := c1.do("still"); got != "still" {
		t.Fatalf("first client after: %q", got)
	}
	fmt.Fprintln(stdin, "done")
	next("STOPPED")
}

// TestAcceptEMFILEServer is TestAcceptEMFILE's server process.
func TestAcceptEMFILEServer(t *testing.T) {
	if os.Getenv(emfileChild) != "1" {
		t.Skip("the server process of TestAcceptEMFILE")
	}
	sys, err := actor.Start(actor.Config{Logger: func(f string, args ...any) {
		fmt.Printf("LOG %s\n", strings.ReplaceAll(fmt.Sprintf(f, args...), "\n", " "))
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown(context.Background())
	l, err := acceptor.Start(sys, "127.0.0.1:0", func() acceptor.Handler { return &lineHandler{greet: true} },
		acceptor.Acceptors(1))
	if err != nil {
		t.Fatal(err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = uint64(fdCount(t))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	// Fill every descriptor number left below the limit: no room for a
	// connection until the parent says so.
	var fill []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		fill = append(fill, f)
	}
	if len(fill) == 0 {
		t.Fatal("no descriptor to fill")
	}
	defer func() {
		for _, f := range fill[1:] {
			f.Close()
		}
	}()
	fmt.Printf("ADDR %s\n", l.Addr())
	in := bufio.NewReader(os.Stdin)
	in.ReadString('\n') // free one
	fill[0].Close()
	fmt.Println("FREED")
	in.ReadString('\n') // raise
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	in.ReadString('\n') // done
	if err := l.Stop(context.Background()); err != nil {
		t.Error(err)
	}
	fmt.Println("STOPPED")
}
