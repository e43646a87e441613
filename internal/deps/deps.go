//go:build tools

// Package deps pins the module's dependencies while packages are being written.
package deps

import (
	_ "github.com/puzpuzpuz/xsync/v3"
	_ "go.uber.org/atomic"
	_ "go.uber.org/goleak"
	_ "golang.org/x/sys/unix"
	_ "pgregory.net/rapid"
)
