//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/disttest"
	"github.com/colonyrt/colony/internal/erlenv"
)

// The README's Erlang worker node, scripted: an erl node running pg
// serves jobs beside a Colony worker node and sees the Colony workers in
// its pg group; the Colony worker node is SIGKILLed and the Erlang node
// serves alone. Skips without erl (fails with CI set).
func TestErlangWorker(t *testing.T) {
	if _, err := exec.LookPath("erl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("erl is not on PATH and CI is set")
		}
		t.Skip("*** SKIPPING: erl is not on PATH (apt-get install erlang-nox) ***")
	}
	_, port := disttest.Registrar(t)
	tag := strconv.Itoa(os.Getpid())
	dName, wName, eName := "djed"+tag+"@127.0.0.1", "djew"+tag+"@127.0.0.1", "djee"+tag+"@127.0.0.1"

	const jobs = 200
	results := make(chan Result, jobs+16)
	app := startDispatcher(t, dName, port, results)
	w := startWorker(t, wName, dName, port)

	// The README's worker fun; the node connects to the dispatcher's node
	// and to the worker node (membership is not transitive) and reports
	// once its pg sees the Colony node's 3 workers beside its own 2.
	script := fmt.Sprintf(`pg:start_link(),
		W = fun W() -> receive {job, From, Id, N} -> From ! {done, Id, N*N, node()}, W() end end,
		[pg:join(distjobs_workers, spawn(W)) || _ <- lists:seq(1, 2)],
		pong = net_adm:ping('%s'), pong = net_adm:ping('%s'),
		Wait = fun Wait(0) -> io:format("erlang sees ~p~n", [length(pg:get_members(distjobs_workers))]);
		           Wait(K) -> case length(pg:get_members(distjobs_workers)) of
		                         5 -> io:format("erlang sees 5~n");
		                         _ -> timer:sleep(10), Wait(K - 1) end end,
		Wait(3000),
		receive after infinity -> ok end`, dName, wName)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out := &disttest.Output{}
	cmd := exec.CommandContext(ctx, "erl", "-noshell", "-name", eName, "-setcookie", "distjobs-test",
		"-start_epmd", "false", "-kernel", "inet_dist_use_interface", "{127,0,0,1}", "-eval", script)
	cmd.Env = erlenv.Env("ERL_EPMD_ADDRESS=127.0.0.1", "ERL_EPMD_PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	erlDone := make(chan struct{})
	go func() { cmd.Wait(); close(erlDone) }()
	defer func() {
		cancel()
		<-erlDone
		if t.Failed() {
			t.Logf("erl printed:\n%s", out)
		}
	}()

	disttest.Eventually(t, 60*time.Second, "the dispatcher to see both nodes' workers", func() bool {
		return workersOn(app, wName) == 3 && workersOn(app, eName) == 2
	})
	disttest.Eventually(t, 60*time.Second, "the Erlang node to see the Colony workers", func() bool {
		return strings.Contains(out.String(), "erlang sees 5")
	})

	go func() {
		for id := range jobs {
			app.Submit(id, id)
			time.Sleep(time.Millisecond)
		}
	}()
	byNode := map[actor.Atom]int{}
	seen := map[int]bool{}
	deadline := time.After(60 * time.Second)
	for k := range jobs {
		select {
		case r := <-results:
			if seen[r.ID] || r.Value != r.ID*r.ID {
				t.Fatalf("job %d: %+v (seen before: %v)", r.ID, r, seen[r.ID])
			}
			seen[r.ID] = true
			if k > jobs/3 {
				byNode[r.Node]++
			}
		case <-deadline:
			t.Fatalf("%d of %d jobs completed within 60 s: %+v", k, jobs, app.Stats.Snapshot())
		}
		if k == jobs/3 {
			w.Kill(t)
		}
	}
	if byNode[actor.Atom(eName)] == 0 {
		t.Errorf("the Erlang node served no job after the Colony worker node was killed: %v", byNode)
	}
	t.Logf("after the kill, by node: %v; stats %+v", byNode, app.Stats.Snapshot())
}
