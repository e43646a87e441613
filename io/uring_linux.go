//go:build linux

package netio

import "errors"

// newUring: the io_uring backend is not built yet.
func newUring() (backend, error) { return nil, errors.New("io_uring backend not built") }
