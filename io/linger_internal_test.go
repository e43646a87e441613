package netio

import (
	"testing"
	"time"
)

// fakeLingering returns a sock that lingers with one byte queued and no
// room to write it, under a negative fd (no real descriptor: its close and
// epoll calls fail with EBADF and touch nothing; the table has no room for
// it, and the expiry under test does not look there).
func fakeLingering(p *poller, fd int) *sock {
	return &sock{fd: fd, p: p, ep: nopEndpoint{}, state: sockLingering, wq: [][]byte{{0}}, pending: 1}
}

// Expiring a lingering socket touches only the sockets whose linger
// timeout has run out. expireLingers scanned every lingering socket, each
// under its lock, every time the earliest deadline passed: O(N) per expiry,
// O(N^2) for N sockets lingering on peers that do not read, all of it on
// the poller goroutine that serves every live socket (16,000 sockets
// closed 1 ms apart cost it 4 s of CPU; 64,000 would saturate it). The
// scan shows here as expiry waiting for the lock of a socket whose
// deadline is an hour away.
func TestLingerExpiryTouchesOnlyDue(t *testing.T) {
	p := &poller{be: nopBackend{}}
	now := time.Now()
	far, due := fakeLingering(p, -2), fakeLingering(p, -3)
	p.takeLinger(lingerer{far, now.Add(time.Hour)})
	p.takeLinger(lingerer{due, now.Add(-time.Millisecond)})
	far.mu.Lock()
	done := make(chan struct{})
	go func() { p.expireLingers(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		far.mu.Unlock()
		<-done
		t.Fatal("expiring one socket waited for the lock of another whose deadline is an hour away: expiry scans every lingering socket")
	}
	far.mu.Unlock()
	if due.state != sockClosed || far.state != sockLingering {
		t.Fatalf("after expiry: due %v, far %v; want closed, lingering", due.state, far.state)
	}
	if want := now.Add(time.Hour); !p.lingerNext.Equal(want) {
		t.Fatalf("next deadline %v, want %v", p.lingerNext, want)
	}
}
