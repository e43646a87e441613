//go:build linux

package netio_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// TestListenAfterShutdown: after Shutdown, Listen and DialFor fail with
// actor.ErrStopped, as every other operation of a stopped System does
// (Listen said "no such process": the owner's lookup failed first), and
// leave no fd behind.
func TestListenAfterShutdown(t *testing.T) {
	sys := startSys(t)
	owner, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err != nil {
		t.Fatal(err)
	}
	peer, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	before := fdCount(t)
	if _, err := netio.Listen(sys, owner, "127.0.0.1:0"); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("Listen after Shutdown: %v, want ErrStopped", err)
	}
	if _, err := netio.DialFor(sys, owner, peer.Addr().String(), time.Second); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("DialFor after Shutdown: %v, want ErrStopped", err)
	}
	if _, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {})); !errors.Is(err, actor.ErrStopped) {
		t.Errorf("Spawn after Shutdown: %v, want ErrStopped", err)
	}
	if n := fdCount(t); n != before {
		t.Errorf("%d fds before, %d after", before, n)
	}
}
