//go:build !linux

// Outside Linux the portable backend is the only one (backend.go).

package netio

import (
	"fmt"
	"net/netip"
)

var platformBackends = []Backend{Portable}

func newBackend(b Backend) (backend, error) {
	if b != Portable {
		return nil, fmt.Errorf("%w: %s", ErrNoBackend, b)
	}
	return newPortable(), nil
}

func fdListen(netip.AddrPort) (endpoint, int, error) {
	return nil, 0, fmt.Errorf("%w: fd sockets", ErrNoBackend)
}

func fdDial(netip.AddrPort) (endpoint, int, error) {
	return nil, 0, fmt.Errorf("%w: fd sockets", ErrNoBackend)
}
