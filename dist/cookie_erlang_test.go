//go:build unix

package dist_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/internal/erltest"
)

// A cookie with Latin-1 letters: an Erlang node started with -setcookie
// cøøkie and a Colony node with Cookie "cøøkie" accept each other, whichever
// dials (OTP digests the atom's characters as bytes, so the Colony node
// digests the Latin-1 bytes, not the UTF-8 text), and a Colony node with
// another cookie is refused.
func TestErlangLatin1Cookie(t *testing.T) {
	erltest.Need(t, "erl", "epmd")
	const ck = "cøøkie"
	port := erltest.EPMD(t)
	// +fnu: init decodes the arguments as UTF-8 whatever the locale.
	erl := erltest.Erl(t, port, erlName(), ck, "+fnu")
	if v := erl.Eval("atom_to_list(erlang:get_cookie()) =:= [99,248,248,107,105,101]."); v != "true" {
		t.Fatalf("the Erlang node's cookie is not cøøkie's Latin-1 characters (%s)", v)
	}
	n := startNode(t, port, dist.Config{Cookie: ck})
	ea := actor.Atom(erl.Name)
	if err := n.Ping(ctxT(t, 10*time.Second), ea); err != nil {
		t.Fatalf("Colony dials Erlang: %v", err)
	}
	if !n.Disconnect(ea) {
		t.Fatal("not connected after the ping")
	}
	eventually(t, 10*time.Second, "the Erlang node sees the disconnect", func() bool {
		return erl.Eval("nodes().") == "[]"
	})
	if v := erl.Eval("net_adm:ping(" + atomLit(n.Name()) + ")."); v != "pong" {
		t.Fatalf("Erlang dials Colony: %s", v)
	}
	// A Colony node whose cookie differs in one letter is refused, both ways.
	other := startNode(t, port, dist.Config{Cookie: "cøokie"})
	if err := other.Ping(ctxT(t, 10*time.Second), ea); err == nil {
		t.Error("a wrong cookie was accepted by the Erlang node")
	}
	if v := erl.Eval("net_adm:ping(" + atomLit(other.Name()) + ")."); v != "pang" {
		t.Errorf("Erlang dials a node of another cookie: %s", v)
	}
}
