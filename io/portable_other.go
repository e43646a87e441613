//go:build !linux

package netio

import "net"

// kernelUnacked: unknown outside Linux (portable.go's design note).
func kernelUnacked(*net.TCPConn) (int, bool) { return 0, false }

// finWait1: unknown outside Linux.
func finWait1(*net.TCPConn) (bool, bool) { return false, false }

// awaitFinAck is never called outside Linux (finWait1 is unknown).
func awaitFinAck(*net.TCPConn) {}
