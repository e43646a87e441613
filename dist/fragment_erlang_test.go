//go:build unix

package dist_test

// Differential tests of large terms on the wire against real Erlang/OTP
// nodes: exit reasons, call replies and erpc results past a distribution
// fragment (64 KiB), which OTP sends and takes as fragmented messages.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
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
			"{exit2_down,big},{peer_inbox,[{'DOWN',l7,big},{'EXIT',l6,big}]},{bystander,pong,[]},{extra,none}]"
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

// Terms of 70 KB and 5 MB between an Erlang caller and a Colony node, as
// between two Erlang nodes (callpeer:big_scenario): a gen_server call's
// request and reply, an erpc:call result (a Go function registered with
// RegisterRPC; erpc carries it in the DOWN reason of its spawned process)
// and argument (in the SPAWN_REQUEST erpc sends),
// and a Server stopping with such a reason, seen by the call's monitor, a
// link and a monitor; the connection survives. Then a Colony caller calls
// the Erlang gen_server with the same terms.
func TestErlangLargeCallsAndResults(t *testing.T) {
	n, e1, e2 := erlPeers(t)
	if err := n.RegisterRPC("big", func(_ *actor.Context, args []any) (any, error) {
		size, ok := args[0].(int)
		if !ok || size < 0 || size > 8<<20 {
			return nil, fmt.Errorf("big takes a size")
		}
		return strings.Repeat("r", size), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := n.RegisterRPC("size_of", func(_ *actor.Context, args []any) (any, error) {
		b, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("size_of takes a binary")
		}
		return len(b), nil
	}); err != nil {
		t.Fatal(err)
	}
	// An Erlang gen_server's crash report formats its reason, which takes
	// OTP longer than the test may wait for a 5 MB term: the 5 MB crash
	// runs against the Colony node alone, and wants what the 70 KB one
	// gave between Erlang nodes; the 5 MB {shutdown, Term}, which OTP does
	// not report, runs against both.
	for _, tc := range []struct {
		size       int
		kind       string
		want       string
		colonyOnly bool
	}{
		{70 << 10, "crash", "[big,big,true,{exit,big},big,big,pong,none]", false},
		{5 << 20, "shutdown", "[big,big,true,{exit,{shutdown,big}},{shutdown,big},{shutdown,big},pong,none]", false},
		{5 << 20, "crash", "[big,big,true,{exit,big},big,big,pong,none]", true},
	} {
		startKV(t, n.sys, "kv")
		sc := fmt.Sprintf("callpeer:big_scenario(%%s, %%s, %d, %s).", tc.size, tc.kind)
		ref := tc.want
		if !tc.colonyOnly {
			if v := e2.Eval("is_pid(callpeer:start())."); v != "true" {
				t.Fatalf("start kv on %s: %s", e2.Name, v)
			}
			ref = e1.Eval(fmt.Sprintf(sc, atomLit(actor.Atom(e2.Name)), "callpeer"))
		}
		if ref != tc.want {
			t.Fatalf("%d bytes, Erlang -> Erlang: %s, want %s", tc.size, ref, tc.want)
		}
		if got := e1.Eval(fmt.Sprintf(sc, atomLit(n.Name()), "colony")); got != ref {
			t.Errorf("%d bytes, Erlang -> Colony: %s, want (Erlang -> Erlang) %s", tc.size, got, ref)
		}
	}

	// Colony calls the Erlang gen_server with a 5 MB request; the reply is
	// the same term.
	if v := e2.Eval("is_pid(callpeer:start())."); v != "true" {
		t.Fatalf("start kv on %s: %s", e2.Name, v)
	}
	big := strings.Repeat("why", 5<<20/3)
	v, err := n.CallName(n.sys, "kv", actor.Atom(e2.Name), etf.Tuple{atomEcho, big}, 30*time.Second)
	if err != nil || v != big {
		t.Fatalf("Colony -> Erlang echo of 5 MB: %d bytes, %v", len(fmt.Sprint(v)), err)
	}
	if err := n.Ping(ctxT(t, 10*time.Second), actor.Atom(e2.Name)); err != nil {
		t.Fatal(err)
	}
}
