//go:build race

package dist_test

// raceEnabled: the race detector is on. Its shadow memory is part of the
// resident set, so a test that measures RSS measures it too.
const raceEnabled = true
