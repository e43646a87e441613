package actor

import (
	"testing"
	"time"
)

// holdLinkSignal makes the finaliser of b, once it has taken b's link to a
// and before it signals a, tell reached and wait for release (at most
// 300 ms: a's Unlink waits for the signal, so the finaliser must go on by
// itself).
func holdLinkSignal(t *testing.T, b, a Pid) (reached, release chan struct{}) {
	reached, release = make(chan struct{}), make(chan struct{})
	hook := func(from, to Pid) {
		if from != b || to != a {
			return
		}
		close(reached)
		select {
		case <-release:
		case <-time.After(300 * time.Millisecond):
		}
	}
	testHookLinkSignal.Store(&hook)
	t.Cleanup(func() { testHookLinkSignal.Store(nil) })
	return reached, release
}

// TestUnlinkWaitsForLinkSignalInFlight: once Unlink returns, the link has no
// effect on the caller (erlang:unlink/1: "it is guaranteed that the link
// ... has no effect on the caller in the future"; an {'EXIT', Id, _} from it
// is in the mailbox already, or never comes). A peer's finaliser that had
// taken the link but not yet signalled the caller let Unlink return at once
// and delivered the Exit after it: to a trapping caller, an Exit after the
// Unlink; to one that does not trap, death by a link it had removed, after
// it had run on (and sent messages) as a live actor.
func TestUnlinkWaitsForLinkSignalInFlight(t *testing.T) {
	for _, trap := range []bool{true, false} {
		sys := startInternal(t, Config{Schedulers: 2})
		b, err := sys.Spawn(ActorFunc(func(*Context, any) {}))
		if err != nil {
			t.Fatal(err)
		}
		out := make(chan bool, 4)
		isExitOfB := func(m any) bool { e, ok := m.(Exit); return ok && e.From == b }
		var opts []SpawnOption
		if trap {
			opts = append(opts, TrapExit())
		}
		a, err := sys.Spawn(ActorFunc(func(c *Context, m any) {
			switch m {
			case "link":
				out <- c.Link(b) == nil
			case "unlink":
				c.Unlink(b)
				if !trap {
					out <- c.w.sys.Alive(c.Self())
					return
				}
				_, err := c.Receive(isExitOfB, 0)
				out <- err == nil
				_, err = c.Receive(isExitOfB, 500*time.Millisecond)
				out <- err == nil
			}
		}), opts...)
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(a, "link")
		if !<-out {
			t.Fatal("link failed")
		}
		reached, release := holdLinkSignal(t, b, a)
		go sys.Exit(b, Atom("boom"))
		<-reached
		sys.Send(a, "unlink")
		atUnlink := <-out
		close(release)
		if trap {
			if after := <-out; !atUnlink && after {
				t.Error("trapping: an Exit from the unlinked peer arrived after Unlink returned")
			}
			sys.Exit(a, Kill)
			continue
		}
		w, err := sys.Monitor(a)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.Done():
			if atUnlink {
				t.Errorf("not trapping: alive after Unlink, then killed by the unlinked peer's exit (%v)", w.Reason())
			}
		case <-time.After(time.Second):
			w.Stop()
		}
		testHookLinkSignal.Store(nil)
	}
}
