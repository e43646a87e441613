// Package colonytest runs tests of actor programs in a deterministic mode:
// one activation at a time, every scheduling decision drawn from the
// test's source (a seed, or rapid), and time on a virtual clock. A run
// replays exactly from its seed, rapid can search the interleavings of a
// program and shrink a failure to a short schedule, and an hour of timers
// takes milliseconds.
//
//	func TestCache(t *testing.T) {
//		colonytest.Check(t, func(t *rapid.T, sys *actor.System) {
//			// spawn the program, drive it, check what it did
//		})
//	}
//
// Run(t, seed, body) is one run from a seed (a failure prints the seed to
// replay); VerifyDeterminism runs a body twice and compares the traces.
// Probe is an actor that records what it receives, with Expect-style
// waits on the virtual clock; Crashes injects kills chosen by the source.
//
// The mode and its limits are described in docs/testing.md. In short: the
// System has one scheduler role and runs one message per step; before each
// step every goroutine of the test is made to block (testing/synctest), so
// the body runs only between steps; the choices are which runnable actor
// goes next (the oldest is the canonical choice, draw 0), whether a
// sender's messages in flight land now or are held back one more step
// (landing is canonical; Holds), and, with Crashes and CallTimeouts,
// whether an actor is killed or a call times out. Context.Blocking and System.Helper
// (io's sockets) are refused with actor.ErrNondeterministic; goroutines
// the test starts itself are outside the mode's control, which the
// determinism check catches.
package colonytest
