package actor

import "testing"

type plainBeh struct{}

func (*plainBeh) Receive(*Context, any) {}

type userServer struct{ ServerBase }

type userTyped struct{ ServerBase }

func (userTyped) HandleCall(*Context, string, ReplyTo[int]) {}

// TestBehaviourTypeNamesTheUsersType: a behaviour is named by the user's
// type through the runtime's wrappers (serverActor, Typed's adapter), and
// a plain actor by its own.
func TestBehaviourTypeNamesTheUsersType(t *testing.T) {
	for _, c := range []struct {
		beh  Actor
		want string
	}{
		{&plainBeh{}, "*actor.plainBeh"},
		{ActorFunc(func(*Context, any) {}), "actor.ActorFunc"},
		{&serverActor{srv: &userServer{}}, "*actor.userServer"},
		{&serverActor{srv: Typed[string, int, any](&userTyped{})}, "*actor.userTyped"},
		{&serverActor{srv: Typed[string, int, any](userTyped{})}, "actor.userTyped"},
	} {
		if got := behaviourType(c.beh); got != c.want {
			t.Errorf("behaviourType(%T) = %q, want %q", c.beh, got, c.want)
		}
	}
}
