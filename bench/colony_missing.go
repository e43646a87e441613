//go:build nocolony

package main

// Building with -tags nocolony leaves Colony out (for when the actor package is mid-change and
// does not compile); the suite then says so instead of measuring it.
func init() {
	registerUnavailable("colony", "colony: NOT MEASURED (built with -tags nocolony)")
}
