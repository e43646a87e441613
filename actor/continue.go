package actor

import (
	"errors"
	"fmt"
)

// Continuer is implemented by a Server that asks for HandleContinue: by
// returning Continue(arg) from Init (gen_server's {ok, State, {continue,
// Arg}} from init/1), or by ContinueAfter from any callback. After Init,
// HandleContinue(arg) runs right after the starter has been told the start
// succeeded, before the server takes any message, even one already queued
// (a named server can be sent to before its Init has run); a self-send
// would queue behind those. It is a callback like the others: a panic or a
// Stop in it ends the server through Terminate. A Typed server gets it if
// the TypedServer implements it.
type Continuer interface {
	HandleContinue(c *Context, arg any)
}

// Continue is what Init returns to start successfully and then run
// HandleContinue(arg) before any message; the Server must implement
// Continuer (otherwise the start fails with a *StartError saying so).
func Continue(arg any) error { return &continueInit{arg} }

// continueInit is Continue's error value: not a failure, a request.
type continueInit struct{ arg any }

func (c *continueInit) Error() string { return fmt.Sprintf("actor: continue %v", c.arg) }

// ContinueAfter asks, from a Server's callback (HandleCall, HandleCast,
// HandleInfo, HandleContinue, or Init), that HandleContinue(arg) run as
// soon as the callback returns, before the server takes another message:
// gen_server's {noreply, State, {continue, Arg}} (or {reply, ...}). A Stop
// or panic in the callback wins over it. It reports false, and does
// nothing, if c is not a Server's, or the Server has no HandleContinue.
// Asked twice in one callback, the last arg is the one continued with.
func ContinueAfter(c *Context, arg any) bool {
	a, ok := c.proc().beh.(*serverActor)
	if !ok {
		return false
	}
	if _, ok := continuerOf(a.srv); !ok {
		return false
	}
	a.cont = &continueInit{arg}
	return true
}

// continuerOf is s's HandleContinue, looking through Typed's adapter.
func continuerOf(s Server) (Continuer, bool) {
	if t, ok := s.(interface{ inner() any }); ok {
		k, ok := t.inner().(Continuer)
		return k, ok
	}
	k, ok := s.(Continuer)
	return k, ok
}

// takeContinue turns an Init result that is Continue(arg) into success and
// the continuation, or into an error if the server cannot continue.
func (a *serverActor) takeContinue(err error) (*continueInit, error) {
	var k *continueInit
	if !errors.As(err, &k) {
		return nil, err
	}
	if _, ok := continuerOf(a.srv); !ok {
		return nil, fmt.Errorf("actor: Init returned Continue, but %T has no HandleContinue", a.srv)
	}
	return k, nil
}

// runContinues runs the HandleContinue asked for, and any it asks for in
// turn, each as a callback (a panic or Stop in it ends the server through
// Terminate, and no later one runs).
func (a *serverActor) runContinues(c *Context) {
	for a.cont != nil {
		k := a.cont
		a.cont = nil
		if a.stopped || c.p.exit.Load() != alive {
			return
		}
		a.runContinue(c, k)
	}
}

// runContinue runs one HandleContinue as a callback.
func (a *serverActor) runContinue(c *Context, k *continueInit) {
	returned := false
	defer func() { a.afterCallback(c, recover(), returned) }()
	h, _ := continuerOf(a.srv)
	h.HandleContinue(c, k.arg)
	returned = true
}
