package actor

import (
	"errors"
	"fmt"
)

// Continuer is implemented by a Server whose Init returns Continue(arg):
// gen_server's {ok, State, {continue, Arg}} from init/1. HandleContinue(arg)
// runs right after the starter has been told the start succeeded, before
// the server takes any message, even one already queued (a named server
// can be sent to before its Init has run). A self-send from Init would
// queue behind those. It is a callback like the others: a panic or a Stop
// in it ends the server through Terminate.
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

// takeContinue turns an Init result that is Continue(arg) into success and
// the continuation, or into an error if the server cannot continue.
func (a *serverActor) takeContinue(err error) (error, *continueInit) {
	var k *continueInit
	if !errors.As(err, &k) {
		return err, nil
	}
	if _, ok := a.srv.(Continuer); !ok {
		return fmt.Errorf("actor: Init returned Continue, but %T has no HandleContinue", a.srv), nil
	}
	return nil, k
}

// runContinue runs HandleContinue as a callback (a panic or Stop in it ends
// the server through Terminate).
func (a *serverActor) runContinue(c *Context, k *continueInit) {
	defer a.afterCallback(c)
	a.srv.(Continuer).HandleContinue(c, k.arg)
}
