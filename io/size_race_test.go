//go:build race

package netio_test

const (
	echoConns   = 200 // -race: fewer connections, same size range
	raceEnabled = true
)
