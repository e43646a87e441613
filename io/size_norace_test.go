//go:build !race

package netio_test

const (
	echoConns   = 1000
	raceEnabled = false
)
