//go:build race

package actor

// raceEnabled turns on invariant assertions and scheduling-order shaking.
const raceEnabled = true
