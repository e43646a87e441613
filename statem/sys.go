package statem

import (
	"fmt"
	"reflect"

	"github.com/colonyrt/colony/actor"
)

// SysState is what the system messages show of a running machine and take
// to replace it (package sysmsg's GetState and ReplaceState, and sys from
// an Erlang node): the state it is in and its data, the Machine (for a
// machine made with Functions, the StateFunctions), as sys:get_state of a
// gen_statem gives {State, Data}. A peer node gets it as that tuple.
//
// Data is the running machine itself, not a copy: reading its fields while
// the machine runs is a data race; suspend it first (sysmsg.Suspend), or
// read a status, which is made on the machine's goroutine.
type SysState[S comparable] struct {
	State S
	Data  any
}

// StateAndData is st as its two parts, for a peer node's {State, Data}.
func (st SysState[S]) StateAndData() (state, data any) { return st.State, st.Data }

// FormatStatus is what a status shows of st: the state, and the data's
// FormatStatus if it has one, else its text (actor.FormatState).
func (st SysState[S]) FormatStatus() any {
	return fmt.Sprintf("{%+v, %+v}", st.State, actor.FormatState(st.Data))
}

// data is the user's value that runs: the Machine, or the StateFunctions
// that Functions adapted.
func (s *server[S]) data() any {
	if f, ok := s.m.(*funcs[S]); ok {
		return f.m
	}
	return s.m
}

// SysState, SysSetState and SysStatus make the machine's state and data
// what the system messages see (actor.SysStater).
func (s *server[S]) SysState() any { return SysState[S]{State: s.state, Data: s.data()} }

// SysSetState takes v, a SysState[S] whose Data is of the running data's
// type, as the machine's state and data; anything else is refused and the
// machine left as it was. A new Data runs from the next event on (for a
// StateFunctions, with the States it gives then).
func (s *server[S]) SysSetState(v any) error {
	st, ok := v.(SysState[S])
	if !ok || st.Data == nil || reflect.TypeOf(st.Data) != reflect.TypeOf(s.data()) {
		return &actor.SysCallbackError{Value: v, Refused: true}
	}
	if st.Data != s.data() {
		var m Machine[S]
		if sf, ok := st.Data.(StateFunctions[S]); ok && s.m != s.data() {
			m = Functions(sf)
		} else if m, ok = st.Data.(Machine[S]); !ok {
			return &actor.SysCallbackError{Value: v, Refused: true}
		}
		n := New(m).(*server[S])
		s.m, s.enter = n.m, n.enter
	}
	s.state, s.term = st.State, st.State
	return nil
}

// SysStatus names the machine as OTP's status does a gen_statem's, and its
// module by the user's type.
func (s *server[S]) SysStatus(st *actor.SysStatus) {
	st.Behaviour = "gen_statem"
	st.Module = fmt.Sprintf("%T", s.data())
}
