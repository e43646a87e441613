//go:build race

package etf_test

// raceEnabled: the race detector is on (sync.Pool then drops a quarter of
// what is put back, so a pooled encode state is sometimes new).
const raceEnabled = true
