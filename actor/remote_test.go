package actor_test

import (
	"errors"
	"testing"

	"github.com/colonyrt/colony/actor"
)

type routed struct {
	from, to actor.Pid
	msg      any
}

type chanRoute chan routed

func (r chanRoute) SendRemote(from, to actor.Pid, msg any) error {
	r <- routed{from, to, msg}
	return nil
}

func TestRemotePidIsStableAndRoundTrips(t *testing.T) {
	id := actor.RemoteID{Node: "erl@127.0.0.1", Creation: 7, ID: 88, Serial: 3}
	p, err := actor.RemotePid(id)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := actor.RemotePid(id)
	if p != q || !p.IsRemote() {
		t.Fatalf("two RemotePids of one id: %v %v (remote %v)", p, q, p.IsRemote())
	}
	got, ok := p.Remote()
	if !ok || got != id {
		t.Fatalf("Remote() = %+v, %v; want %+v", got, ok, id)
	}
	// Another creation is another incarnation: another pid.
	id.Creation++
	if r, _ := actor.RemotePid(id); r == p {
		t.Fatal("a new creation gave the same pid")
	}
	if _, err := actor.RemotePid(actor.RemoteID{}); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("empty node name: %v", err)
	}
}

func TestLocalPartsRoundTrip(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	id, serial, ok := sys.LocalParts(pid)
	if !ok || sys.LocalPid(id, serial) != pid {
		t.Fatalf("LocalParts(%v) = %d %d %v", pid, id, serial, ok)
	}
	if pid.IsRemote() {
		t.Fatal("a local pid says it is remote")
	}
	if _, ok := pid.Remote(); ok {
		t.Fatal("a local pid has a remote identity")
	}
	other := start(t, actor.Config{Schedulers: 1})
	if _, _, ok := other.LocalParts(pid); ok {
		t.Fatal("another System claims the pid")
	}
}

func TestSendToRemotePidTakesTheRoute(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	rp, _ := actor.RemotePid(actor.RemoteID{Node: "peer@127.0.0.1", Creation: 1, ID: 5, Serial: 0})
	if err := sys.Send(rp, "x"); !errors.Is(err, actor.ErrNoRoute) {
		t.Fatalf("send without a route: %v", err)
	}
	route := make(chanRoute, 4)
	if err := sys.SetRemote(route); err != nil {
		t.Fatal(err)
	}
	if err := sys.SetRemote(route); !errors.Is(err, actor.ErrRemoteSet) {
		t.Fatalf("second SetRemote: %v", err)
	}
	if err := sys.Send(rp, "outside"); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, route); r.to != rp || r.msg != "outside" || !r.from.IsZero() {
		t.Fatalf("from outside: %+v", r)
	}
	sender, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { c.Send(rp, m) }))
	sys.Send(sender, "inside")
	if r := recv(t, route); r.to != rp || r.msg != "inside" || r.from != sender {
		t.Fatalf("from an actor: %+v (sender %v)", r, sender)
	}
	// A local pid of another System is still malformed here.
	other := start(t, actor.Config{Schedulers: 1})
	foreign, _ := other.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err := sys.Send(foreign, 1); !errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("pid of another local System: %v", err)
	}
}
