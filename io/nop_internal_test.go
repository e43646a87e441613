package netio

import (
	"net"
	"time"
)

// nopBackend and nopEndpoint stand in for a backend and a socket in
// tests that drive the poller's own data structures: every operation
// does nothing, and a close succeeds.
type nopBackend struct{}

func (nopBackend) kind() Backend                          { return Portable }
func (nopBackend) add(*sock) error                        { return nil }
func (nopBackend) remove(*sock) error                     { return nil }
func (nopBackend) wait([]ioEvent, time.Time) (int, error) { return 0, nil }
func (nopBackend) wake()                                  {}
func (nopBackend) busy() bool                             { return false }
func (nopBackend) close()                                 {}

type nopEndpoint struct{}

func (nopEndpoint) read([]byte) (int, error)       { return 0, errAgain }
func (nopEndpoint) write([]byte) (int, error)      { return 0, errAgain }
func (nopEndpoint) accept() (endpoint, int, error) { return nil, 0, errAgain }
func (nopEndpoint) connectErr() error              { return nil }
func (nopEndpoint) shutdownWrite() error           { return nil }
func (nopEndpoint) setAbort()                      {}
func (nopEndpoint) kernelOutput() bool             { return false }
func (nopEndpoint) finWaiting(bool) bool           { return false }
func (nopEndpoint) localAddr() *net.TCPAddr        { return nil }
func (nopEndpoint) remoteAddr() *net.TCPAddr       { return nil }
func (nopEndpoint) close() error                   { return nil }
func (nopEndpoint) family() family                 { return famNet }
func (nopEndpoint) String() string                 { return "nop" }
