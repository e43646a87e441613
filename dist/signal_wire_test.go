package dist_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/handshake"
)

// EXIT_TT and EXIT2_TT carry a sequential trace token before the reason
// ({13, From, To, Token, Reason}): the reason a linked or trapping actor
// gets is the last element, not the token.
func TestExitTTCarriesItsReasonLast(t *testing.T) {
	port := testEPMD(t)
	n := startNode(t, port, dist.Config{})
	termEnc = n.Encoder()
	c := dialRaw(t, n)
	name := uniqueName("tracer")
	cfg := &handshake.Config{Name: name, Creation: 7, Cookie: "cookie",
		Flags: handshake.Mandatory | handshake.Published | handshake.Fragments}
	if _, err := handshake.Dial(c, cfg, string(n.Name()), nil); err != nil {
		t.Fatalf("raw handshake: %v", err)
	}
	from, err := actor.RemotePid(actor.RemoteID{Node: actor.Atom(name), Creation: 7, ID: 1})
	if err != nil {
		t.Fatal(err)
	}
	local, inbox := spawnDriven(t, n.sys, actor.TrapExit())
	token := etf.Tuple{0, actor.Atom("label"), 1, from, 0}
	c.Write(frame([]byte{112}, term(t, etf.Tuple{1, from, local})))
	c.Write(frame([]byte{112}, term(t, etf.Tuple{13, from, local, token, actor.Atom("linked_reason")})))
	c.Write(frame([]byte{112}, term(t, etf.Tuple{18, from, local, token, actor.Atom("exit2_reason")})))
	for _, want := range []actor.Atom{"linked_reason", "exit2_reason"} {
		if m, ok := recv(t, inbox, 10*time.Second).(actor.Exit); !ok || m.From != from || m.Reason != want {
			t.Fatalf("got %#v, want an Exit from %v with %s", m, from, want)
		}
	}
}
