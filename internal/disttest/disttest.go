// Package disttest holds the scaffolding that the distribution tests share
// (dist, dist/pg, examples/distjobs, tests/chaos): a registrar private to
// the test, node names unique in the process, polling with a deadline, and
// worker nodes run as child processes of the test binary.
//
// Everything here stays on loopback and is stopped by the test's cleanup
// (or, for a Child, by the test that kills it). A real epmd, when a test
// wants one, comes from dist/internal/erltest.
package disttest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/dist/epmd"
)

// Registrar serves an EPMD registrar from this process on a free port of
// 127.0.0.1 and returns it and its port; it stops when t ends (a test
// that wants it gone sooner may Close it first).
func Registrar(t testing.TB) (*epmd.Server, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := epmd.Serve(l)
	t.Cleanup(func() { s.Close() })
	return s, l.Addr().(*net.TCPAddr).Port
}

// EPMD returns the port of an epmd private to the test, for the tests
// that need one but not Erlang: the real one that start starts (pass
// dist/internal/erltest's EPMD) when epmd is installed, else Registrar's.
// Either stops when t ends.
func EPMD(t testing.TB, start func(testing.TB) int) int {
	t.Helper()
	if _, err := exec.LookPath("epmd"); err != nil {
		_, port := Registrar(t)
		return port
	}
	return start(t)
}

var nameSeq atomic.Int64

// UniqueName returns a long node name at 127.0.0.1 that no other call in
// this process returns: prefix, the process id and a sequence number.
func UniqueName(prefix string) string {
	return fmt.Sprintf("%s%d_%d@127.0.0.1", prefix, os.Getpid(), nameSeq.Add(1))
}

// Eventually polls cond until it holds, and fails t (naming what it
// waited for) when d passes first.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Ctx returns a context that times out after d and is cancelled when t
// ends.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Output is what a process a test started writes, kept for the test's
// checks and messages: safe for concurrent writes, it keeps the first
// 64 KiB and drops the rest (a chatty process costs no more). Its zero
// value is ready to use; it must not be copied after the first Write.
type Output struct {
	mu sync.Mutex // guards b
	b  strings.Builder
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.b.Len() < 1<<16 {
		o.b.Write(p)
	}
	return len(p), nil
}

// String is what was kept so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
