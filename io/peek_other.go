//go:build !unix

package netio

import "syscall"

// waitReadable has no buffer-free wait outside unix: the reader waits
// inside Read, holding its buffer (portable.go's design note, Input).
func waitReadable(syscall.RawConn) (sockErr, err error) { return nil, nil }
