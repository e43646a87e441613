package actor

// Behaviour checks at spawn.
//
// Go finds optional callbacks by interface assertion, so a method whose
// signature is a near miss (a plain actor's Init written as the Server's
// Init(*Context) error, a HandleContinue with the wrong argument) compiles
// and is silently never called. And a typed nil pointer is a non-nil
// interface: it passes the nil check and panics at its first callback,
// inside the actor. Both are a caller's mistake that Spawn can see, so
// Spawn refuses them with an error that names the method and the signature
// it expected.
//
// The check reflects on the behaviour's type once and caches the verdict
// per type (checkedTypes), so a spawn pays one map load.
//
// Where the runtime names a behaviour for people (the deterministic mode's
// trace and its fault candidates), it names the user's type through its own
// wrappers: behaviourType.

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// ErrBadBehaviour: the behaviour has a method named as an optional callback
// (Init, HandleContinue) whose signature is not the one Colony calls, so it
// would never run. The error says which method and which signature was
// expected.
var ErrBadBehaviour = errors.New("actor: bad behaviour")

// checkedTypes maps a behaviour's reflect.Type to its verdict (error or
// nil). Types are few and verdicts never change: sync.Map's read path.
var checkedTypes sync.Map

// callbackSig is an optional callback: its name, the interface that Colony
// asserts, and the signature to print.
type callbackSig struct {
	name  string
	iface reflect.Type
	sig   string
}

var (
	actorCallbacks = []callbackSig{
		{"Init", reflect.TypeFor[Initer](), "Init(*actor.Context)"},
	}
	serverCallbacks = []callbackSig{
		{"HandleContinue", reflect.TypeFor[Continuer](), "HandleContinue(*actor.Context, any)"},
	}
)

// checkActor is Spawn's check of a plain behaviour.
func checkActor(a Actor) error {
	if a == nil {
		return ErrNilBehaviour
	}
	if f, isFunc := a.(ActorFunc); isFunc {
		if f == nil {
			return ErrNilBehaviour // a nil ActorFunc would crash at its first message
		}
		return nil
	}
	if _, internal := a.(*serverActor); internal {
		return nil
	}
	return checkType(a, actorCallbacks, "a plain actor's Init is Init(*actor.Context); Init(*actor.Context) error is a Server's: start it with StartServer")
}

// checkServer is StartServer's and SpawnServer's check of a Server.
func checkServer(s Server) error {
	if s == nil {
		return ErrNilBehaviour
	}
	if t, ok := s.(interface{ inner() any }); ok { // Typed's adapter
		in := t.inner()
		if isNilPointer(in) {
			return fmt.Errorf("%w: %T is a nil pointer", ErrNilBehaviour, in)
		}
		return checkType(in, serverCallbacks, "")
	}
	return checkType(s, serverCallbacks, "")
}

// checkType returns the cached verdict for v's type, computing it once.
func checkType(v any, cbs []callbackSig, hint string) error {
	if isNilPointer(v) {
		return fmt.Errorf("%w: %T is a nil pointer", ErrNilBehaviour, v)
	}
	t := reflect.TypeOf(v)
	if err, ok := checkedTypes.Load(t); ok {
		e, _ := err.(error)
		return e
	}
	var verdict error
	for _, cb := range cbs {
		m := reflect.ValueOf(v).MethodByName(cb.name) // bound: its type has no receiver
		if !m.IsValid() || t.Implements(cb.iface) {
			continue
		}
		verdict = fmt.Errorf("%w: %v has method %s with signature %v, which is never called; the callback is %s",
			ErrBadBehaviour, t, cb.name, m.Type(), cb.sig)
		if hint != "" {
			verdict = fmt.Errorf("%w (%s)", verdict, hint)
		}
		break
	}
	checkedTypes.Store(t, verdict)
	return verdict
}

// isNilPointer reports whether v is a typed nil pointer or func: a
// behaviour whose callbacks would panic on their first use of it.
func isNilPointer(v any) bool {
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Func:
		return rv.IsNil()
	}
	return false
}

// A Wrapper is a behaviour that runs a user's value of another kind, as
// package statem runs a Machine in a Server of its own. Wherever Colony
// names a behaviour's type (trace lines, colonytest's Crashes candidates,
// Shutdown's error), it names the value Wrapped returns instead, looking
// through wrappers of wrappers, as it does through its own Server and Typed
// adapters. Wrapped returns nil to be named itself.
type Wrapper interface {
	Wrapped() any
}

// behaviourType names a behaviour as %T prints the user's value, seen
// through the runtime's wrappers: a Server (StartServer, SpawnServer) is
// named by the Server, not by the serverActor that runs it, and a Typed
// adapter by the TypedServer it adapts ("*main.store"). Every place that
// reports a behaviour's type uses it, so a name seen in one (a trace line)
// matches in another (colonytest's Crashes candidates).
func behaviourType(a any) string {
	for {
		switch w := a.(type) {
		case *serverActor:
			a = w.srv
			continue
		case interface{ inner() any }: // Typed's adapter
			a = w.inner()
			continue
		case Wrapper:
			if in := w.Wrapped(); in != nil {
				a = in
				continue
			}
		}
		return typeName(a)
	}
}
