package statem_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/statem"
	"github.com/colonyrt/colony/sysmsg"
)

// TestSysSeesStateAndData: the system messages see a machine as
// sys:get_state sees a gen_statem, its state and data; replace_state sets
// both (a value of another kind is refused, the machine left as it was);
// get_status names it a state machine of the user's type; and
// gen_server:stop's request stops it through Terminate.
func TestSysSeesStateAndData(t *testing.T) {
	sys := startSystem(t)
	lock := &codeLock{code: "12", relock: time.Hour}
	pid, err := statem.Start[string](sys, lock)
	if err != nil {
		t.Fatal(err)
	}
	actor.Cast(sys, pid, "1")
	actor.Cast(sys, pid, "2")
	v, err := sysmsg.GetState(sys, pid, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := v.(statem.SysState[string])
	if !ok || st.State != "open" || st.Data != lock {
		t.Fatalf("GetState: %#v, want the lock open with its data", v)
	}

	// Replace: back to locked, the same data.
	v, err = sysmsg.ReplaceState(sys, pid, func(s any) any {
		st := s.(statem.SysState[string])
		st.State = "locked"
		return st
	}, 5*time.Second)
	if err != nil || v.(statem.SysState[string]).State != "locked" {
		t.Fatalf("ReplaceState: %v, %v", v, err)
	}
	if got, err := actor.Call[lockCount](sys, pid, "count", 5*time.Second); err != nil || got.State != "locked" {
		t.Fatalf("after the replace the machine says %+v, %v; want locked", got, err)
	}
	// A value of another kind is refused.
	var ce *actor.SysCallbackError
	if _, err := sysmsg.ReplaceState(sys, pid, func(any) any { return "locked" }, 5*time.Second); !errors.As(err, &ce) {
		t.Fatalf("a string as the state: %v, want a SysCallbackError", err)
	}
	if _, err := sysmsg.ReplaceState(sys, pid, func(s any) any {
		return statem.SysState[string]{State: "open", Data: &lockModel{}}
	}, 5*time.Second); !errors.As(err, &ce) {
		t.Fatalf("data of another type: %v, want a SysCallbackError", err)
	}
	if got, err := actor.Call[lockCount](sys, pid, "count", 5*time.Second); err != nil || got.State != "locked" {
		t.Fatalf("after refused replaces the machine says %+v, %v; want locked", got, err)
	}

	status, err := sysmsg.GetStatus(sys, pid, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if status.Behaviour != "gen_statem" || status.Module != "*statem_test.codeLock" {
		t.Errorf("status: behaviour %q, module %q; want gen_statem, *statem_test.codeLock", status.Behaviour, status.Module)
	}
	if s, _ := status.State.(string); !strings.HasPrefix(s, "{locked, ") {
		t.Errorf("status state %q, want {locked, ...}", status.State)
	}
	if err := sysmsg.Stop(sys, pid, actor.Normal, 5*time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// TestSysReplacesAStateFunctionsMachine: a machine made with Functions
// shows the user's StateFunctions as its data, and takes a new one.
func TestSysReplacesAStateFunctionsMachine(t *testing.T) {
	sys := startSystem(t)
	pid, err := statem.Start(sys, statem.Functions[bool](toggle{}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sysmsg.ReplaceState(sys, pid, func(s any) any {
		st := s.(statem.SysState[bool])
		if _, ok := st.Data.(toggle); !ok {
			t.Errorf("data %T, want statem_test.toggle", st.Data)
		}
		st.State = true
		return st
	}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if on, err := actor.Call[bool](sys, pid, "flip", 5*time.Second); err != nil || on {
		t.Fatalf("a flip from the replaced state answered %v, %v; want false", on, err)
	}
}
