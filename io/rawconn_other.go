//go:build !unix

// Non-blocking work on a net.Conn's descriptor for the portable backend
// (portable.go's design note, Input and Output), where the OS has one.

package netio

import "syscall"

// waitReadable has no buffer-free wait outside unix: the reader waits
// inside Read, holding its buffer (portable.go's design note, Input).
func waitReadable(syscall.RawConn) (sockErr, err error) { return nil, nil }

// tryWrite: no non-blocking write outside unix; every write goes through
// the writer goroutine (portable.go's design note, Output).
func tryWrite(syscall.Conn, []byte) (int, error) { return 0, nil }
