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
