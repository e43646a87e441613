//go:build linux

package netio_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// echoSizes returns n message sizes, log-uniform in [1 B, 1 MiB], with both
// ends present.
func echoSizes(n int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, 7))
	s := make([]int, n)
	for i := range s {
		s[i] = 1 << r.IntN(21) // 1 .. 1 MiB
		s[i] += r.IntN(s[i])   // spread within the octave
		if s[i] > 1<<20 {
			s[i] = 1 << 20
		}
	}
	s[0], s[n-1] = 1, 1<<20
	return s
}

// TestEchoConcurrent: many concurrent plain net clients, each sends a random
// checksummed message through the Colony echo server and checks what comes back.
func TestEchoConcurrent(t *testing.T) {
	needFDs(t, 2*echoConns) // both ends of every connection are in this process
	sys := startSys(t)
	addr := echoServer(t, sys)
	sizes := echoSizes(echoConns, 1)
	var wg sync.WaitGroup
	errs := make(chan error, len(sizes))
	for i, size := range sizes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- echoOnce(addr, i, size)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func echoOnce(addr string, i, size int) error {
	cn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return fmt.Errorf("client %d: dial: %w", i, err)
	}
	defer cn.Close()
	cn.SetDeadline(time.Now().Add(60 * time.Second))
	msg := make([]byte, size)
	r := rand.New(rand.NewPCG(uint64(i), 99))
	for j := range msg {
		msg[j] = byte(r.Uint32())
	}
	want := sha256.Sum256(msg)
	werr := make(chan error, 1)
	go func() {
		_, err := cn.Write(msg)
		werr <- err
	}()
	got := make([]byte, size)
	if _, err := io.ReadFull(cn, got); err != nil {
		return fmt.Errorf("client %d (size %d): read: %w", i, size, err)
	}
	if err := <-werr; err != nil {
		return fmt.Errorf("client %d: write: %w", i, err)
	}
	if sha256.Sum256(got) != want {
		return fmt.Errorf("client %d (size %d): checksum mismatch", i, size)
	}
	// Half-close: the server sees Closed, drains, closes; we then read EOF.
	cn.(*net.TCPConn).CloseWrite()
	if n, err := cn.Read(got[:1]); err != io.EOF {
		return fmt.Errorf("client %d: after close: read %d, %v; want EOF", i, n, err)
	}
	return nil
}
