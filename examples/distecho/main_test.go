package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/internal/erlenv"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEcho starts the example's node serving its own registrar on a
// private port (so the test needs no epmd and disturbs none).
func startEcho(t *testing.T, name, cookie string) (port int, n *dist.Node) {
	t.Helper()
	port = freePort(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	sys, n, err := start(dist.Config{Name: name, Cookie: cookie, EPMD: dist.EPMDServe, EPMDPort: port}, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return port, n
}

type inbox chan any

func (b inbox) Receive(_ *actor.Context, msg any) { b <- msg }

// A second Colony node pings the example's node and talks to its echo
// server by name, then by the pid the echo gave back.
func TestEchoFromColony(t *testing.T) {
	name := fmt.Sprintf("distecho%d@127.0.0.1", os.Getpid())
	port, _ := startEcho(t, name, "c")
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown(context.Background())
	peer, err := dist.Start(sys, dist.Config{Name: "peer" + name, Cookie: "c", EPMD: dist.EPMDExternal, EPMDPort: port})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := peer.Ping(ctx, actor.Atom(name)); err != nil {
		t.Fatalf("ping: %v", err)
	}
	box := make(inbox, 4)
	self, _ := sys.Spawn(box)
	peer.SendName(self, "echo", actor.Atom(name), etf.Tuple{self, "hello"})
	var echoPid actor.Pid
	select {
	case m := <-box:
		r, ok := m.(etf.Tuple)
		if !ok || len(r) != 3 || r[0] != actor.Atom("echo") || r[2] != "hello" {
			t.Fatalf("reply %#v", m)
		}
		echoPid = r[1].(actor.Pid)
	case <-time.After(10 * time.Second):
		t.Fatal("no echo")
	}
	sys.Send(echoPid, etf.Tuple{self, 42})
	select {
	case m := <-box:
		if m.(etf.Tuple)[2] != 42 {
			t.Errorf("reply by pid %#v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no echo by pid")
	}
}

// The README's erl session, scripted: erl registers with the example's own
// registrar, pings it and gets its echo. Skips without erl (fails with CI).
func TestEchoFromErlang(t *testing.T) {
	if _, err := exec.LookPath("erl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("erl is not on PATH and CI is set")
		}
		t.Skip("*** SKIPPING: erl is not on PATH (apt-get install erlang-nox) ***")
	}
	name := fmt.Sprintf("distecho%d@127.0.0.1", os.Getpid())
	cookie := fmt.Sprintf("c%d", time.Now().UnixNano())
	port, _ := startEcho(t, name, cookie)
	script := fmt.Sprintf(`pong = net_adm:ping('%s'),
		{echo, '%s'} ! {self(), hello},
		receive {echo, P, hello} -> P ! {self(), again} after 5000 -> halt(2) end,
		receive {echo, _, again} -> halt(0) after 5000 -> halt(3) end.`, name, name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "erl", "-noshell", "-name", fmt.Sprintf("x%d@127.0.0.1", os.Getpid()),
		"-setcookie", cookie, "-start_epmd", "false", "-kernel", "inet_dist_use_interface", "{127,0,0,1}", "-eval", script)
	cmd.Env = erlenv.Env("ERL_EPMD_ADDRESS=127.0.0.1", "ERL_EPMD_PORT="+strconv.Itoa(port))
	groupKill(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("erl: %v\n%s", err, out)
	}
}
