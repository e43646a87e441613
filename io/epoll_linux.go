//go:build linux

// The epoll backend (backend.go): the design note in poller.go is its
// protocol. Registration is EPOLLIN|EPOLLOUT|EPOLLRDHUP|EPOLLET once per
// socket, user data (fd, gen); gen 0 is the eventfd that wakes the wait.

package netio

import (
	"errors"
	"fmt"
	"log"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// platformBackends: Linux has all three; epoll is the default.
var platformBackends = []Backend{Epoll, Uring, Portable}

// newBackend starts a backend of kind b for a new poller. Uring falls
// back to epoll, with a log line, when the kernel refuses io_uring.
func newBackend(b Backend) (backend, error) {
	switch b {
	case Portable:
		return newPortable(), nil
	case Uring:
		be, err := newUring()
		if err == nil {
			return be, nil
		}
		logUringFallback(err)
	}
	return newEpoll()
}

// logUringFallback says, once a process, why io_uring is not used.
var uringFallbackLogged = make(chan struct{}, 1)

func logUringFallback(err error) {
	select {
	case uringFallbackLogged <- struct{}{}:
		log.Printf("netio: io_uring unavailable (%v); using epoll", err)
	default:
	}
}

// epollBackend: fields set at start are immutable; the rest say who owns
// them.
type epollBackend struct {
	epfd int
	evfd int // the wake-up; written under poller.mu (wake), read by wait

	// Owned by the poller goroutine.
	epf      *os.File        // epfd, registered with Go's netpoller
	epraw    syscall.RawConn // epf's
	deadline time.Time       // epf's read deadline in force
	kevs     []unix.EpollEvent
}

func newEpoll() (*epollBackend, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("netio: epoll_create1: %w", err)
	}
	evfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("netio: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(evfd), Pad: 0} // gen 0: the eventfd
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &ev); err != nil {
		unix.Close(evfd)
		unix.Close(epfd)
		return nil, fmt.Errorf("netio: epoll_ctl eventfd: %w", err)
	}
	epf, raw, err := pollableFile(epfd, "epoll")
	if err != nil {
		unix.Close(evfd)
		return nil, err
	}
	return &epollBackend{epfd: epfd, evfd: evfd, epf: epf, epraw: raw, kevs: make([]unix.EpollEvent, maxEvents)}, nil
}

// pollableFile wraps fd (an epoll fd, an io_uring fd: readable while it
// has events or completions) in an os.File registered with Go's
// netpoller, so the poller goroutine waits for it as any Go socket read
// waits (parked, no thread held) instead of blocking a thread in the
// kernel (poller.go's design note). On error fd is closed.
func pollableFile(fd int, name string) (*os.File, syscall.RawConn, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("netio: %s fd nonblocking: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	raw, err := f.SyscallConn()
	if err == nil {
		// os.NewFile quietly returns a file the netpoller does not watch
		// when the runtime cannot add it (ENOSPC: max_user_watches); its
		// deadlines then fail, and so would the poller's first wait.
		err = f.SetReadDeadline(time.Time{})
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("netio: %s fd in Go's netpoller: %w", name, err)
	}
	return f, raw, nil
}

func (b *epollBackend) kind() Backend { return Epoll }
func (b *epollBackend) busy() bool    { return false }

func (b *epollBackend) add(s *sock) error {
	ev := unix.EpollEvent{
		Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET,
		Fd:     int32(s.fd),
		Pad:    int32(s.gen),
	}
	if err := unix.EpollCtl(b.epfd, unix.EPOLL_CTL_ADD, s.fd, &ev); err != nil {
		return fmt.Errorf("netio: epoll_ctl add fd %d: %w", s.fd, err)
	}
	return nil
}

func (b *epollBackend) remove(s *sock) error {
	// DEL can fail only if the fd is not in the set; closing removes it anyway.
	_ = unix.EpollCtl(b.epfd, unix.EPOLL_CTL_DEL, s.fd, nil)
	return s.ep.close()
}

// wake writes the eventfd (poller.mu held: close closes evfd under it).
func (b *epollBackend) wake() {
	var one = [8]byte{1}
	_, _ = rawWrite(b.evfd, one[:]) // EAGAIN only if the counter is saturated: a wake is pending anyway
}

func (b *epollBackend) close() {
	unix.Close(b.evfd)
	b.epf.Close() // closes epfd
}

// wait returns the next batch of events: epoll_wait with no timeout, and
// while that finds nothing, a park on Go's netpoller until the epoll fd is
// readable or deadline passes (then 0 events). The eventfd's event resets
// its counter here, before the poller takes its lists (poller.go, step 4).
func (b *epollBackend) wait(evs []ioEvent, deadline time.Time) (int, error) {
	if !deadline.Equal(b.deadline) {
		if err := b.epf.SetReadDeadline(deadline); err != nil {
			return 0, err
		}
		b.deadline = deadline
	}
	kevs := b.kevs[:min(len(b.kevs), len(evs))]
	var n int
	var err error
	rerr := b.epraw.Read(func(fd uintptr) bool {
		for {
			n, err = pollEvents(int(fd), kevs)
			if err != unix.EINTR {
				return n > 0 || err != nil
			}
		}
	})
	if rerr != nil {
		if errors.Is(rerr, os.ErrDeadlineExceeded) {
			return 0, nil
		}
		return 0, rerr
	}
	if err != nil {
		return 0, fmt.Errorf("epoll_wait on fd %d: %w", b.epfd, err)
	}
	for i := 0; i < n; i++ {
		ev := &kevs[i]
		if ev.Pad == 0 {
			var cnt [8]byte
			_, _ = rawRead(b.evfd, cnt[:])
		}
		evs[i] = ioEvent{slot: ev.Fd, gen: uint32(ev.Pad), mask: ev.Events}
	}
	return n, nil
}
