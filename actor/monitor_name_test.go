package actor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/colonyrt/colony/actor"
)

// monitorNameProbe runs f in an actor and reports what it returns, then
// forwards every later message it gets to out.
func monitorNameProbe(t *testing.T, sys *actor.System, f func(c *actor.Context) any) (actor.Pid, <-chan any, any) {
	t.Helper()
	out := make(chan any, 16)
	first := true
	pid, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if first {
			first = false
			out <- f(c)
			return
		}
		out <- m
	}))
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(pid, "go")
	return pid, out, recv(t, out)
}

func TestMonitorNameErrors(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	_, _, got := monitorNameProbe(t, sys, func(c *actor.Context) any {
		_, err := c.MonitorName("")
		return err
	})
	if !errors.Is(got.(error), actor.ErrBadName) {
		t.Fatalf("MonitorName(\"\"): %v", got)
	}
}

func TestMonitorNameOfSelfSetsUpNothing(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	_, _, got := monitorNameProbe(t, sys, func(c *actor.Context) any {
		must(t, c.Register("me"))
		r, err := c.MonitorName("me")
		must(t, err)
		info, _ := c.Info()
		return fmt.Sprint(info.Watching, c.Demonitor(r, false))
	})
	if got != "0 false" {
		t.Fatalf("watching, demonitor = %v; want 0 false", got)
	}
}

func TestMonitorNameDownNamesTheName(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	target, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Atom("bye")) }), actor.Name("svc"))
	var ref actor.Ref
	_, out, _ := monitorNameProbe(t, sys, func(c *actor.Context) any {
		var err error
		ref, err = c.MonitorName("svc")
		must(t, err)
		return nil
	})
	sys.Send(target, "stop")
	d, ok := recv(t, out).(actor.Down)
	if !ok || d.Ref != ref || d.Name != "svc" || d.Pid != target || d.Reason != actor.Atom("bye") {
		t.Fatalf("Down = %+v; want ref %v, name svc, pid %v, reason bye", d, ref, target)
	}
	// A pid monitor's Down has no name.
	other, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Normal) }))
	_, out2, _ := monitorNameProbe(t, sys, func(c *actor.Context) any { c.Monitor(other); return nil })
	sys.Send(other, "stop")
	if d := recv(t, out2).(actor.Down); d.Name != "" || d.Pid != other {
		t.Fatalf("pid monitor's Down = %+v", d)
	}
}

func TestMonitorNameDemonitorFlush(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	_, _, got := monitorNameProbe(t, sys, func(c *actor.Context) any {
		r, err := c.MonitorName("nobody") // a Down noproc is queued at once
		must(t, err)
		return c.Demonitor(r, true)
	})
	if got != false {
		t.Fatalf("Demonitor of a delivered noproc Down = %v; want false", got)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ExampleContext_MonitorName: a monitor taken by name follows the actor
// that held the name, and its Down names the name.
func ExampleContext_MonitorName() {
	sys, _ := actor.Start(actor.Config{Schedulers: 1})
	defer sys.Shutdown(context.Background())

	svc, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) { c.Stop(actor.Atom("crashed")) }), actor.Name("svc"))
	downs := make(chan actor.Down, 2)
	watcher, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		switch m := m.(type) {
		case string:
			c.MonitorName(m)
			if m == "svc" {
				c.Send(svc, "stop") // after the monitor is taken
			}
		case actor.Down:
			downs <- m
		}
	}))
	sys.Send(watcher, "nobody") // nobody holds it: noproc at once
	d := <-downs
	fmt.Println(d.Name, d.Reason, d.Pid.IsZero())
	sys.Send(watcher, "svc")
	d = <-downs
	fmt.Println(d.Name, d.Reason, d.Pid == svc)
	// Output:
	// nobody noproc true
	// svc crashed true
}
