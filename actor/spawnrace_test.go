package actor_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
)

// killByName kills whatever holds name (any name, if name is ""), as soon
// as it appears, until stop is closed. It is the racer that finds a named child through the registry
// while its Spawn is still running.
func killByName(sys *actor.System, name string, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-stop:
			return
		default:
		}
		found := false
		for _, n := range sys.Registered() {
			if name != "" && n != name {
				continue
			}
			if pid, ok := sys.Whereis(n); ok {
				sys.Exit(pid, actor.Kill)
				found = true
			}
		}
		if !found {
			runtime.Gosched()
		}
	}
}

// TestNamedSpawnRacesKill: a named actor killed by someone who found it by
// name while its Spawn is still running must not leave the name behind.
// Spawn registers the name after the record is published; a kill landing
// between the registry insert and the record's name being set ran the
// finaliser with no name to remove, and the name then pointed at a dead pid
// for ever (the next Spawn with that name failed with ErrNameTaken).
func TestNamedSpawnRacesKill(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	rounds := 20000
	if testing.Short() || raceBuild {
		rounds = 3000
	}
	const name = "racer"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go killByName(sys, name, stop, &wg)
	defer func() { close(stop); wg.Wait() }()
	idle := actor.ActorFunc(func(*actor.Context, any) {})
	for r := range rounds {
		pid, err := sys.Spawn(idle, actor.Name(name))
		if err != nil {
			t.Fatalf("round %d: Spawn: %v (the name outlived its holder)", r, err)
		}
		// The killer gets it; then the name must vanish with it.
		deadline := time.Now().Add(10 * time.Second)
		for sys.Alive(pid) || sys.Stats().Live != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the named actor was not killed", r)
			}
			runtime.Gosched()
		}
		if cur, ok := sys.Whereis(name); ok {
			t.Fatalf("round %d: name %q still registered to dead %v", r, name, cur)
		}
	}
}

// TestNamedSpawnLinkRacesKill: a trapping parent's SpawnLink of a named
// child that is killed (found by its name) while the spawn is running gets
// the child's exit signal: spawn_link is atomic, so the link exists from the
// child's birth. A kill between the name's registration and the parent's
// half of the link found no parent half to signal, and the parent then
// linked itself to a dead child and never heard of its death.
func TestNamedSpawnLinkRacesKill(t *testing.T) {
	sys := start(t, actor.Config{Schedulers: 2})
	rounds := 2000
	if testing.Short() || raceBuild {
		rounds = 500
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go killByName(sys, "", stop, &wg)
	defer func() { close(stop); wg.Wait() }()
	idle := actor.ActorFunc(func(*actor.Context, any) {})
	done := make(chan error, 1)
	parent, err := sys.Spawn(actor.ActorFunc(func(c *actor.Context, m any) {
		if m != "go" {
			return
		}
		for r := range rounds {
			child, err := c.SpawnLink(idle, actor.Name("child"+itoa(r)))
			if err != nil {
				done <- err
				return
			}
			_, err = c.Receive(func(m any) bool {
				e, ok := m.(actor.Exit)
				return ok && e.From == child
			}, 5*time.Second)
			if err != nil {
				done <- errors.New("round " + itoa(r) + ": no exit signal from the killed linked child")
				return
			}
		}
		done <- nil
		c.Stop(actor.Normal)
	}), actor.TrapExit())
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(parent, "go")
	if err := recv(t, done); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
