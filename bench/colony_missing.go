//go:build !colony

package main

// Colony's implementations are in colony_workloads.go behind the "colony" build tag while the
// actor package is being written; without the tag the suite says so instead of measuring it.
func init() {
	registerUnavailable("colony", "colony: NOT MEASURED — build with -tags colony once github.com/colonyrt/colony/actor compiles")
}
