package actor_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

var timerRefForm = regexp.MustCompile(`^#TimerRef<(\d+)\.(\d+)>$`)

// nodeOf is the System number a pid prints with (<node.index.generation>).
func nodeOf(t *testing.T, p actor.Pid) string {
	t.Helper()
	s := p.String()
	return s[1:strings.IndexByte(s, '.')]
}

// TestTimerRefPrintsAsAReference: a TimerRef prints as Erlang prints a
// reference, #TimerRef<node.n>: the System that made it and the timer's
// number there, growing with each timer armed, for every kind of timer (an
// interval's ref holds a pointer, which used to print as an address), and
// so does the Timeout that carries one; the zero TimerRef is
// #TimerRef<0.0>.
func TestTimerRefPrintsAsAReference(t *testing.T) {
	sys := start(t, actor.Config{})
	pid := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	node := nodeOf(t, pid)
	var refs []actor.TimerRef
	for _, arm := range []func() (actor.TimerRef, error){
		func() (actor.TimerRef, error) { return sys.SendAfter(pid, "a", time.Hour) },
		func() (actor.TimerRef, error) { return sys.StartTimer(pid, "b", time.Hour) },
		func() (actor.TimerRef, error) { return sys.SendInterval(pid, "c", time.Hour) },
		func() (actor.TimerRef, error) { return sys.SendAfterName("nobody", "d", time.Hour) },
	} {
		ref, err := arm()
		if err != nil {
			t.Fatal(err)
		}
		defer sys.CancelTimer(ref)
		refs = append(refs, ref)
	}
	last := uint64(0)
	for i, ref := range refs {
		m := timerRefForm.FindStringSubmatch(ref.String())
		if m == nil || m[1] != node {
			t.Fatalf("timer %d prints %q, want #TimerRef<%s.n>", i, ref.String(), node)
		}
		n, _ := strconv.ParseUint(m[2], 10, 64)
		if n <= last {
			t.Errorf("timer %d prints %q: its number is not above the one armed before it (%d)", i, ref, last)
		}
		last = n
	}
	if got, want := fmt.Sprint(actor.Timeout{Ref: refs[1], Msg: "b"}), "{"+refs[1].String()+" b}"; got != want {
		t.Errorf("a Timeout prints %q, want %q", got, want)
	}
	if got := (actor.TimerRef{}).String(); got != "#TimerRef<0.0>" {
		t.Errorf("the zero TimerRef prints %q", got)
	}
}

// TestRequestPrintsCallerAndMessage: a Request prints as its caller and its
// message, not as the struct of its reply cell's address.
func TestRequestPrintsCallerAndMessage(t *testing.T) {
	sys := start(t, actor.Config{})
	seen := make(chan string, 2)
	srv := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if req, ok := m.(actor.Request); ok {
			seen <- fmt.Sprint(req)
			c.Reply(req, nil)
		}
	}))
	if _, err := sys.Call(srv, "from outside", time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, seen); got != "call from outside: from outside" {
		t.Errorf("a call from outside prints %q", got)
	}
	caller := mustSpawn(t, sys, actor.ActorFunc(func(c *actor.Context, m any) {
		if _, err := c.Call(srv, m, time.Minute); err != nil {
			t.Error(err)
		}
	}))
	sys.Send(caller, "from an actor")
	if got, want := recv(t, seen), "call from "+caller.String()+": from an actor"; got != want {
		t.Errorf("a call from an actor prints %q, want %q", got, want)
	}
}
