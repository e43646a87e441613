package actor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// TestShutdownRacesSpawn: roots spawned from outside while Shutdown runs are
// all stopped, and Shutdown with no deadline returns (a root published just
// after Shutdown's scan of the slab must still get its signal).
func TestShutdownRacesSpawn(t *testing.T) {
	for range 20 {
		sys, err := actor.Start(actor.Config{Schedulers: 2})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		spawned := make(chan struct{})
		go func() {
			defer close(stop)
			idle := actor.ActorFunc(func(*actor.Context, any) {})
			for i := 0; ; i++ {
				if _, err := sys.Spawn(idle); errors.Is(err, actor.ErrStopped) {
					return
				} else if err != nil {
					t.Error(err)
					return
				}
				if i == 100 {
					close(spawned)
				}
			}
		}()
		<-spawned
		done := make(chan error, 1)
		go func() { done <- sys.Shutdown(context.Background()) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Shutdown did not return; stats %+v", sys.Stats())
		}
		<-stop
		if n := sys.Stats().Live; n != 0 {
			t.Fatalf("%d actors live after Shutdown", n)
		}
	}
}
