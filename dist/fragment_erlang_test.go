//go:build unix

package dist_test

// Differential tests of large terms on the wire against real Erlang/OTP
// nodes: exit reasons, call replies and erpc results past a distribution
// fragment (64 KiB), which OTP sends and takes as fragmented messages.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/handshake"
	"github.com/colonyrt/colony/dist/internal/erltest"
)

// Exit reasons of 70 KB and 5 MB over a link, a monitor and exit/2, each
// both ways (sigdiff's {big, Size} scenario): an Erlang driver gets the
// same trace with a Colony peer as with an Erlang peer, and the
// connection survives with a bystander's link and monitor untouched. The
// Colony peer runs twice: as it is, with EXIT_PAYLOAD (the reason after
// the control message, fragmented, as OTP sends it to OTP), and without
// (the reason inside the control message: OTP sends its first fragment
// with the whole control message, and so must Colony).
func TestErlangLargeExitReasons(t *testing.T) {
	dir, port, ck := sigdiffSetup(t)
	driver := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	epeer := erltest.Erl(t, port, erlName(), ck, "-pa", dir)
	if v := epeer.Eval("sigdiff:start_ctl()."); v != "ok" {
		t.Fatalf("start_ctl: %s", v)
	}
	peers := map[string]*testNode{"ExitPayload": startNode(t, port, dist.Config{Cookie: ck})}
	restore := dist.WithoutFlags(handshake.ExitPayload)
	peers["NoExitPayload"] = startNode(t, port, dist.Config{Cookie: ck})
	restore()
	for _, n := range peers {
		if _, err := n.sys.Spawn(&sigCtl{n: n.Node}, actor.Name("ctl")); err != nil {
			t.Fatal(err)
		}
	}
	for _, size := range []int{70 << 10, 5 << 20} {
		bin := fmt.Sprintf("{binary,%d}", size/3*3)
		want := "[{link,{'EXIT',p1,big}},{monitor,big},{exit2,{'EXIT',p3,big}},{trapped,[{'EXIT',driver,big}]}," +
			"{exit2_down,big},{peer_inbox,[{'EXIT',l6,big},{'DOWN',l7,big}]},{bystander,pong,[]},{extra,none}]"
		scenario := fmt.Sprintf("sigdiff:run({big, %d}, ", size)
		ref := driver.Eval(scenario + atomLit(actor.Atom(epeer.Name)) + ").")
		if ref != want {
			t.Fatalf("%d bytes, Erlang peer: %s, want %s", size, ref, want)
		}
		for name, n := range peers {
			t.Run(fmt.Sprintf("%s_%d", name, size), func(t *testing.T) {
				got := driver.Eval(scenario + atomLit(n.Name()) + ").")
				if got != ref {
					t.Errorf("Colony peer:\n  %.2000s\nErlang peer:\n  %s", got, ref)
				}
				if strings.Contains(got, bin) {
					t.Errorf("a reason came back changed")
				}
				if !n.Connected(actor.Atom(driver.Name)) {
					t.Errorf("the connection is gone")
				}
			})
		}
	}
}
