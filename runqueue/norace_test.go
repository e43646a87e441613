//go:build !race

package runqueue

// raceBuild: built with -race.
const raceBuild = false
