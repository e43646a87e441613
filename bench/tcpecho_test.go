//go:build colony

package main

import (
	"os"
	"testing"
	"time"
)

// TestTCPEcho prints the TCP echo figures (go test -tags colony -run TCPEcho -v).
// TCPECHO_CONNS=1000,10000 (default 1000) sets the connection counts.
func TestTCPEcho(t *testing.T) {
	sizes := []int{1000}
	if os.Getenv("TCPECHO_CONNS") == "1000,10000" {
		sizes = []int{1000, 10000}
	}
	if err := runTCPEchoReport(os.Stdout, 2*time.Second, sizes...); err != nil {
		t.Fatal(err)
	}
}
