//go:build !race

package etf_test

const raceEnabled = false
