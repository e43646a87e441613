package statem

import (
	"fmt"

	"github.com/colonyrt/colony/actor"
)

// StateFunctions is a gen_statem in state_functions mode: a handler per
// state. States returns them, keyed by state, once, when Functions adapts
// the machine. Init and Terminate are Machine's.
type StateFunctions[S comparable] interface {
	Init(c *Context[S]) (S, error)
	States() map[S]State[S]
	Terminate(c *Context[S], reason actor.Reason, state S)
}

// State is one state's callbacks in state_functions mode. Handle handles
// the state's events, as Machine.HandleEvent does. Enter, if set, is the
// state's enter call (StateName(enter, OldState, Data)); if any state has
// one, the machine makes enter calls, and a state without one keeps its
// state and data on entry.
type State[S comparable] struct {
	Enter  func(c *Context[S], old S)
	Handle func(c *Context[S], ev Event)
}

// stateFuncs is Functions' adapter, seen by New.
type stateFuncs[S comparable] interface {
	Machine[S]
	Enterer[S]
	enters() bool
}

type funcs[S comparable] struct {
	m      StateFunctions[S]
	states map[S]State[S]
	enter  bool
}

// Wrapped makes the runtime name the machine by the user's StateFunctions
// (actor.Wrapper).
func (f *funcs[S]) Wrapped() any { return f.m }

// Functions adapts a StateFunctions machine to a Machine, for Start,
// Spawn and New. A machine that enters a state missing from its States
// crashes at the state's first callback, as OTP's does with undef.
// Functions(nil) is nil.
func Functions[S comparable](m StateFunctions[S]) Machine[S] {
	if m == nil {
		return nil
	}
	f := &funcs[S]{m: m, states: m.States()}
	for _, st := range f.states {
		if st.Enter != nil {
			f.enter = true
		}
	}
	return f
}

func (f *funcs[S]) enters() bool                  { return f.enter }
func (f *funcs[S]) Init(c *Context[S]) (S, error) { return f.m.Init(c) }
func (f *funcs[S]) Terminate(c *Context[S], reason actor.Reason, state S) {
	f.m.Terminate(c, reason, state)
}

func (f *funcs[S]) HandleEvent(c *Context[S], state S, ev Event) {
	st, ok := f.states[state]
	if !ok || st.Handle == nil {
		panic(fmt.Sprintf("statem: no handler for state %v", state))
	}
	st.Handle(c, ev)
}

func (f *funcs[S]) Enter(c *Context[S], old, state S) {
	st, ok := f.states[state]
	if !ok {
		panic(fmt.Sprintf("statem: no handler for state %v", state))
	}
	if st.Enter != nil {
		st.Enter(c, old)
	}
}
