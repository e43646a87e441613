//go:build !unix

// Non-blocking work on a net.Conn's descriptor for the portable backend
// (portable.go's design note, Input and Output), where the OS has one.

package netio

import (
	"net"
	"syscall"
)

// connFD: no descriptor to read and write on directly outside unix; the
// reader reads chunks ahead (portable.go's design note, Input).
func connFD(*net.TCPConn) int { return -1 }

// peeker is unix's; waitReadable does not use it here.
type peeker struct{}

// waitReadable has no buffer-free wait outside unix: the reader waits
// inside Read, holding its buffer (portable.go's design note, Input).
func waitReadable(syscall.RawConn, *peeker) (n int, sockErr, err error) { return 1, nil, nil }

// fdRead is never called outside unix (there is no fd).
func fdRead(int, []byte) (int, error) { return 0, errAgain }

// tryWrite: no non-blocking write outside unix; every write goes through
// the writer goroutine (portable.go's design note, Output).
func tryWrite(int, []byte) (int, error) { return 0, nil }
