package main

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/colonytest"
	"github.com/colonyrt/colony/supervisor"
)

// The kvstore's store and command language, property-tested in
// colonytest's deterministic mode: clients run random command sequences
// through conn.do (what a connection runs for each line) concurrently,
// under random interleavings and random kills of the store, and every
// reply is checked against what that client may see. (The sockets are
// left out: io cannot run in the mode; the listener's own tests cover
// them.)

// kvClient runs its commands one after another and keeps the replies; a
// call answers with the log once the last command is done.
type kvClient struct {
	cmds    []string
	replies []string
	wait    []actor.Request
}

type nextCmd struct{}

func (k *kvClient) Init(c *actor.Context) { c.Send(c.Self(), nextCmd{}) }

func (k *kvClient) Receive(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case nextCmd:
		i := len(k.replies)
		k.replies = append(k.replies, (&conn{}).do(c, k.cmds[i]))
		if i+1 < len(k.cmds) {
			c.Send(c.Self(), nextCmd{})
			return
		}
		for _, r := range k.wait {
			c.Reply(r, k.replies)
		}
		k.wait = nil
	case actor.Request:
		if len(k.replies) == len(k.cmds) {
			c.Reply(m, k.replies)
			return
		}
		k.wait = append(k.wait, m)
	}
}

// kvCommands draws client id's commands: its own two keys, every PUT a
// value no other PUT writes, so a stale value is told from a fresh one.
func kvCommands(t *rapid.T, id int) []string {
	n := rapid.IntRange(1, 12).Draw(t, fmt.Sprintf("c%d.len", id))
	cmds := make([]string, n)
	for i := range cmds {
		k := fmt.Sprintf("k%d%s", id, rapid.SampledFrom([]string{"a", "b"}).Draw(t, "key"))
		switch rapid.IntRange(0, 9).Draw(t, "op") {
		case 0:
			cmds[i] = "CRASH"
		case 1, 2:
			cmds[i] = "DEL " + k
		case 3, 4, 5:
			cmds[i] = fmt.Sprintf("PUT %s v%d.%d", k, id, i)
		default:
			cmds[i] = "GET " + k
		}
	}
	return cmds
}

func startStore(sys *actor.System) (actor.Pid, error) {
	return supervisor.Start(sys, supervisor.Spec{
		Strategy:  supervisor.OneForOne,
		Intensity: 3,
		Period:    5 * time.Second,
		Children: []supervisor.ChildSpec{
			{ID: "store", Start: supervisor.ServerStart(newStore, actor.WithSpawn(actor.Name(storeName)))},
		},
	})
}

// TestStoreUnderInterleavingsAndCrashes: with two clients on disjoint
// keys, a GET sees NOTFOUND or the value of the client's own latest PUT
// of that key (never an older one, never one it deleted); with no crash
// at all (no CRASH command, no kill) it sees exactly the model's answer
// and no command fails.
func TestStoreUnderInterleavingsAndCrashes(t *testing.T) {
	// Kills only once the tree is up (a kill during its start fails the
	// start, which is the supervisor's contract, not the store's).
	var up atomic.Bool
	isStore := func(c colonytest.Candidate) bool {
		pid, ok := c.Sys.Whereis(storeName)
		return up.Load() && ok && pid == c.Pid
	}
	colonytest.Check(t, func(t *rapid.T, sys *actor.System) {
		up.Store(false)
		if _, err := startStore(sys); err != nil {
			t.Fatal(err)
		}
		up.Store(true)
		first, _ := sys.Whereis(storeName)
		cmds := [][]string{kvCommands(t, 0), kvCommands(t, 1)}
		pids := make([]actor.Pid, len(cmds))
		for i, cs := range cmds {
			var err error
			if pids[i], err = sys.Spawn(&kvClient{cmds: cs}); err != nil {
				t.Fatal(err)
			}
		}
		logs := make([][]string, len(cmds))
		for i, pid := range pids {
			var err error
			if logs[i], err = actor.Call[[]string](sys, pid, "log", time.Minute); err != nil {
				t.Fatalf("client %d: %v", i, err)
			}
		}
		// A kill of an idle store is seen by no client: the store's pid
		// tells that it restarted.
		now, ok := sys.Whereis(storeName)
		crashed := !ok || now != first
		for _, cs := range cmds {
			for _, c := range cs {
				crashed = crashed || c == "CRASH"
			}
		}
		for i := range cmds {
			checkClient(t, i, cmds[i], logs[i], crashed)
		}
	}, colonytest.Crashes(1, 30, isStore))
}

// checkClient checks one client's replies against its model. mayReset: a
// crash was asked for, or the store restarted (a kill by the mode); a
// reset shows up as failures (ERR) and NOTFOUNDs, which are allowed
// whenever a reset may have been.
func checkClient(t *rapid.T, id int, cmds, replies []string, mayReset bool) {
	model := map[string]string{}
	for i, cmd := range cmds {
		rep := replies[i]
		f := strings.Fields(cmd)
		if strings.HasPrefix(rep, "ERR") {
			if !mayReset && f[0] != "CRASH" {
				// A kill by the mode is the only other way; it shows up
				// as a reset, which the rest of the log must respect.
				mayReset = true
			}
			if f[0] == "PUT" || f[0] == "DEL" {
				delete(model, f[1]) // it may or may not have been applied
				model[f[1]+"?"] = "unknown"
			}
			continue
		}
		switch f[0] {
		case "PUT":
			model[f[1]] = f[2]
			delete(model, f[1]+"?")
		case "DEL":
			delete(model, f[1])
			delete(model, f[1]+"?")
		case "GET":
			want, have := model[f[1]]
			_, unknown := model[f[1]+"?"]
			switch {
			case rep == "NOTFOUND" && (!have || mayReset):
			case rep == "VALUE "+want && have:
			case unknown && strings.HasPrefix(rep, "VALUE"):
			default:
				t.Fatalf("client %d, command %d (%s): got %q, model says %q (present %v, a reset possible %v)\nall: %q\nreplies: %q",
					id, i, cmd, rep, want, have, mayReset, cmds, replies)
			}
		}
	}
}
