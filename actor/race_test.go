//go:build race

package actor_test

const raceBuild = true
