//go:build nocolony

package main

// Building with -tags nocolony leaves Colony out (for when the actor package is mid-change and
// does not compile); the suite then says so instead of measuring it.
func init() {
	registerUnavailable("colony", "colony: NOT MEASURED (built with -tags nocolony)")
	registerUnavailable("colony-once", "colony-once: NOT MEASURED (built with -tags nocolony)")
	registerUnavailable("colony-uring", "colony-uring: NOT MEASURED (built with -tags nocolony)")
	registerUnavailable("colony-portable", "colony-portable: NOT MEASURED (built with -tags nocolony)")
}
