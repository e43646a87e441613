package etf_test

// Running the real Erlang side of the tests (testdata/otp.escript).
//
// The escript runs as its own process group, killed when the test ends or
// its deadline passes, so a hung node never outlives its test. escript
// missing: the test skips loudly, or fails when CI is set (the convention of
// tests/erldiff).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/internal/erlenv"
	"github.com/colonyrt/colony/tests/erldiff"
)

// otpTimeout bounds one escript run.
const otpTimeout = 60 * time.Second

var skipNotice sync.Once

// needEscript returns escript's path, or skips (fails with CI set) the test.
func needEscript(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("escript")
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatal(erldiff.MissingErlangCI)
	}
	msg := "etf: *** SKIPPING Erlang test: escript is not on PATH (apt-get install erlang-nox); with CI set this is a failure ***"
	skipNotice.Do(func() { fmt.Fprintln(os.Stderr, msg) })
	t.Skip(msg)
	return ""
}

func otpCommand(ctx context.Context, t testing.TB, mode string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, needEscript(t), "testdata/otp.escript", mode)
	cmd.Env = erlenv.Env("ERL_CRASH_DUMP_SECONDS=0")
	groupKill(cmd)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// otpVectors runs `otp.escript vectors` and returns its terms' bytes by name.
func otpVectors(t *testing.T) map[string][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), otpTimeout)
	defer cancel()
	cmd := otpCommand(ctx, t, "vectors")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("otp.escript vectors: %v\n%s", err, stderr.String())
	}
	vs := make(map[string][]byte)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, h, ok := strings.Cut(line, " ")
		b, err := hex.DecodeString(h)
		if !ok || err != nil {
			t.Fatalf("otp.escript vectors: bad line %q", line)
		}
		vs[name] = b
	}
	return vs
}

// otpEcho is a running `otp.escript echo`: binary_to_term then
// term_to_binary in a real Erlang node.
type otpEcho struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

// startEcho starts the echo node; it is stopped at the test's cleanup.
func startEcho(t *testing.T) *otpEcho {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), otpTimeout)
	e := &otpEcho{cancel: cancel}
	e.cmd = otpCommand(ctx, t, "echo")
	e.cmd.Stderr = &e.stderr
	in, err := e.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	e.in, e.out = in, bufio.NewReader(out)
	t.Cleanup(func() {
		e.in.Close() // eof: the node halts
		err := e.cmd.Wait()
		cancel()
		if err != nil && !t.Failed() {
			t.Errorf("otp.escript echo: %v\n%s", err, e.stderr.String())
		}
	})
	return e
}

var errOTPRefused = errors.New("binary_to_term refused the term")

// roundTrip sends versioned term bytes b and returns Erlang's re-encoding.
func (e *otpEcho) roundTrip(b []byte) ([]byte, error) {
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	if _, err := e.in.Write(append(frame, b...)); err != nil {
		return nil, fmt.Errorf("write to erl: %w (stderr: %s)", err, e.stderr.String())
	}
	var n [4]byte
	if _, err := io.ReadFull(e.out, n[:]); err != nil {
		return nil, fmt.Errorf("read from erl: %w (stderr: %s)", err, e.stderr.String())
	}
	reply := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(e.out, reply); err != nil {
		return nil, fmt.Errorf("read from erl: %w", err)
	}
	if len(reply) == 0 || reply[0] != 0 {
		return nil, fmt.Errorf("%w: %s", errOTPRefused, reply)
	}
	return reply[1:], nil
}
