//go:build linux

package netio_test

import (
	"strings"
	"testing"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// TestDetailDescribesHeldSockets: the actor detail names a listener by
// its address (the socket's String).
func TestDetailDescribesHeldSockets(t *testing.T) {
	sys := startSys(t)
	owner, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	l, err := netio.Listen(sys, owner, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d, err := sys.Detail(owner)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Resources) != 1 || d.Resources[0] != "tcp "+l.Addr().String() {
		t.Fatalf("Resources = %q, want [%q]", d.Resources, "tcp "+l.Addr().String())
	}
	if !strings.HasPrefix(d.Resources[0], "tcp 127.0.0.1:") {
		t.Fatalf("Resources = %q", d.Resources)
	}
}
