package actor_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestUnregisterRacesDeath: an Unregister of a name racing the death of its
// holder must not leave the name bound to the dead pid once the death is
// complete. Once Exit(holder, Kill) has returned, the holder's finaliser has
// run (its links and monitors are signalled): in every order of the two
// operations the name is free, so Whereis must not return the dead holder.
func TestUnregisterRacesDeath(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	idle := actor.ActorFunc(func(*actor.Context, any) {})
	const name = "racer"
	deadline := time.Now().Add(2 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		a := mustSpawn(t, sys, idle, actor.Name(name))
		var wg sync.WaitGroup
		var ready sync.WaitGroup
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready.Done()
			if n%2 == 0 {
				runtime.Gosched()
			}
			_ = sys.Unregister(name)
		}()
		ready.Wait()
		sys.Exit(a, actor.Kill)
		if p, ok := sys.Whereis(name); ok && p == a {
			wg.Wait()
			t.Fatalf("iteration %d: after its holder's death, %q is still bound to the dead %v", n, name, p)
		}
		wg.Wait()
		// The name is free now, whichever came first.
		if p, ok := sys.Whereis(name); ok {
			t.Fatalf("iteration %d: %q bound to %v after both", n, name, p)
		}
	}
}

// TestLeaveGroupBadPid: LeaveGroup of a malformed pid (the zero Pid, another
// System's) is ErrBadPid, as JoinGroup of one is; it used to report that the
// pid had not joined the group. A dead pid's leave is still not-joined (pg's
// not_joined): its death took its entries.
func TestLeaveGroupBadPid(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 1})
	other := start(t, actor.Config{Schedulers: 1})
	foreign := mustSpawn(t, other, actor.ActorFunc(func(*actor.Context, any) {}))
	for _, tc := range []struct {
		name string
		pid  actor.Pid
	}{{"zero pid", actor.Pid{}}, {"another System's pid", foreign}} {
		if err := sys.LeaveGroup("g", tc.pid); !errors.Is(err, actor.ErrBadPid) {
			t.Errorf("LeaveGroup of %s: %v, want ErrBadPid", tc.name, err)
		}
	}
	live := mustSpawn(t, sys, actor.ActorFunc(func(*actor.Context, any) {}))
	if err := sys.JoinGroup("g", live); err != nil {
		t.Fatal(err)
	}
	if err := sys.LeaveGroup("g", live); err != nil {
		t.Fatalf("LeaveGroup of a member: %v", err)
	}
	if err := sys.LeaveGroup("g", live); err == nil || errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("second LeaveGroup: %v, want not joined", err)
	}
	if err := sys.LeaveGroup("g", deadPid(t, sys)); err == nil || errors.Is(err, actor.ErrBadPid) {
		t.Fatalf("LeaveGroup of a dead pid: %v, want not joined", err)
	}
}
