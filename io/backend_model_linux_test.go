package netio

import (
	"fmt"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"
)

// modelReg is one registration of the backend model: one end of a
// connected pair registered with the backend, the other end (peer) the
// test writes to.
type modelReg struct {
	s         *sock
	peer      func([]byte) error // writes to the other end
	peerClose func()
	unread    int  // bytes written to the peer and not yet read from s
	readable  bool // the sock's view: an input event since its last read found nothing
	wantIn    bool // input came while not readable: an input event is owed
	sawOut    bool // the registration's first event (room) came
	removed   bool // remove was called; its fd closes when the kernel is done
	closed    bool // the fd is closed (epoll at once, uring once fdGone is)
}

// backendModel drives one backend (epoll, io_uring or portable) through
// the calls the poller makes, on one goroutine as the poller does, and
// checks the protocol of backend.go against a model of what is owed:
//   - every event names a registration by its slot and gen, never an
//     unknown gen (invariant 1); on the fd backends never one whose fd is
//     already closed (2, uring's U2);
//   - input that comes while the sock would think its socket empty (no
//     input event since a read found nothing) is followed by an input
//     event (3), and a wake by a wake-up event (4), whether the wake came
//     before the wait or from another goroutine during it;
//   - a removed registration's fd is closed, and busy false, once the
//     kernel is done (5).
type backendModel struct {
	b       backend
	kind    Backend
	lis     *net.TCPListener // portable's pairs are TCP connections on loopback
	regs    []*modelReg
	byGen   map[uint32]*modelReg
	gen     uint32
	wakeDue bool
	evs     []ioEvent
}

func (m *backendModel) live() []*modelReg {
	var out []*modelReg
	for _, r := range m.regs {
		if !r.removed {
			out = append(out, r)
		}
	}
	return out
}

// closedNow marks removed registrations whose fd the backend has closed.
func (m *backendModel) closedNow() {
	for _, r := range m.regs {
		if !r.removed || r.closed {
			continue
		}
		if r.s.fdGone == nil { // epoll and portable: closed by remove
			r.closed = true
			continue
		}
		select {
		case <-r.s.fdGone:
			r.closed = true
		default:
		}
	}
}

// wait runs one backend wait with deadline d and checks each event.
func (m *backendModel) wait(t *rapid.T, d time.Duration) {
	m.closedNow() // an event for a registration closed before this wait is a bug
	closedBefore := map[uint32]bool{}
	for _, r := range m.regs {
		if r.closed {
			closedBefore[r.s.gen] = true
		}
	}
	start := time.Now()
	n, err := m.b.wait(m.evs, start.Add(d))
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if took := time.Since(start); took > d+2*time.Second {
		t.Fatalf("wait of %v took %v", d, took)
	}
	for _, ev := range m.evs[:n] {
		if ev.gen == 0 {
			m.wakeDue = false
			continue
		}
		r := m.byGen[ev.gen]
		switch {
		case r == nil:
			t.Fatalf("event for unknown (slot %d, gen %d)", ev.slot, ev.gen)
		case closedBefore[ev.gen] && m.kind != Portable:
			// Portable's reader may post for a closed registration: its
			// gen resolves to nothing (backend.go, invariant 1); an fd
			// backend's kernel side is gone by then (2, U2).
			t.Fatalf("event for (slot %d, gen %d) after its fd was closed", ev.slot, ev.gen)
		case ev.slot != int32(r.s.fd):
			t.Fatalf("event for gen %d names slot %d, registered as slot %d", ev.gen, ev.slot, r.s.fd)
		}
		if ev.mask&(evIn|evRdHup|evHup|evErr) != 0 {
			r.wantIn, r.readable = false, true
		}
		if ev.mask&evOut != 0 {
			r.sawOut = true
		}
	}
	m.closedNow()
}

// owed: what the model still waits for.
func (m *backendModel) owed() string {
	m.closedNow()
	if m.wakeDue {
		return "a wake-up"
	}
	for _, r := range m.regs {
		switch {
		case !r.removed && r.wantIn:
			return fmt.Sprintf("an input event for fd %d gen %d", r.s.fd, r.s.gen)
		case !r.removed && !r.sawOut:
			return fmt.Sprintf("the first (room) event for fd %d gen %d", r.s.fd, r.s.gen)
		case r.removed && !r.closed:
			return fmt.Sprintf("the close of removed fd %d gen %d", r.s.fd, r.s.gen)
		}
	}
	if m.b.busy() {
		return "busy false"
	}
	return ""
}

// settle waits until nothing is owed, within 5 s.
func (m *backendModel) settle(t *rapid.T) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		o := m.owed()
		if o == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still owed after 5 s: %s", o)
		}
		m.wait(t, 20*time.Millisecond)
	}
}

func (m *backendModel) add(t *rapid.T) {
	if len(m.live()) >= 32 {
		t.Skip("enough registered")
	}
	m.gen++
	r := &modelReg{}
	if m.kind == Portable {
		c, err := net.DialTCP("tcp", nil, m.lis.Addr().(*net.TCPAddr))
		if err != nil {
			t.Fatal(err)
		}
		sc, err := m.lis.AcceptTCP()
		if err != nil {
			t.Fatal(err)
		}
		e := newConnEndpoint(sc)
		r.s = &sock{fd: e.slot, gen: m.gen, ep: e}
		r.peer = func(b []byte) error { _, err := c.Write(b); return err }
		r.peerClose = func() { c.Close() }
	} else {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		r.s = &sock{fd: fds[0], gen: m.gen, ep: &fdEndpoint{fd: fds[0]}}
		r.peer = func(b []byte) error {
			n, err := unix.Write(fds[1], b)
			if err == nil && n != len(b) {
				err = fmt.Errorf("short write: %d of %d", n, len(b))
			}
			return err
		}
		r.peerClose = func() { unix.Close(fds[1]) }
	}
	if err := m.b.add(r.s); err != nil {
		t.Fatal(err)
	}
	m.regs = append(m.regs, r)
	m.byGen[r.s.gen] = r
}

func (m *backendModel) write(t *rapid.T) {
	live := m.live()
	if len(live) == 0 {
		t.Skip("nothing registered")
	}
	r := rapid.SampledFrom(live).Draw(t, "reg")
	k := rapid.IntRange(1, 300).Draw(t, "bytes")
	if err := r.peer(make([]byte, k)); err != nil {
		t.Fatalf("write to the peer: %v", err)
	}
	r.unread += k
	if !r.readable {
		r.wantIn = true
	}
}

// drain reads what the socket has until a read finds nothing, as a sock
// does after an input event, and checks it is no more than was written;
// input still on its way is owed an event.
func (m *backendModel) drain(t *rapid.T) {
	live := m.live()
	if len(live) == 0 {
		t.Skip("nothing registered")
	}
	r := rapid.SampledFrom(live).Draw(t, "reg")
	buf := make([]byte, 512)
	got := 0
	for {
		n, err := r.s.ep.read(buf)
		if err == errAgain {
			break
		}
		if err != nil || n == 0 {
			t.Fatalf("read fd %d: %d, %v", r.s.fd, n, err)
		}
		got += n
	}
	if got > r.unread {
		t.Fatalf("read %d bytes from slot %d, %d were written", got, r.s.fd, r.unread)
	}
	r.unread -= got
	r.readable = false
	r.wantIn = r.unread > 0
}

func (m *backendModel) remove(t *rapid.T) {
	live := m.live()
	if len(live) == 0 {
		t.Skip("nothing registered")
	}
	r := rapid.SampledFrom(live).Draw(t, "reg")
	if err := m.b.remove(r.s); err != nil {
		t.Fatalf("remove fd %d: %v", r.s.fd, err)
	}
	r.removed = true
	r.peerClose()
}

func TestBackendsKeepTheEventProtocol(t *testing.T) {
	for _, kind := range []Backend{Epoll, Uring, Portable} {
		t.Run(string(kind), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				var b backend
				var err error
				switch kind {
				case Uring:
					b, err = newUring()
				case Epoll:
					b, err = newEpoll()
				case Portable:
					b = newPortable()
				}
				if err != nil {
					t.Skipf("%s unavailable: %v", kind, err)
				}
				m := &backendModel{b: b, kind: kind, byGen: map[uint32]*modelReg{}, evs: make([]ioEvent, rapid.IntRange(1, 8).Draw(t, "batch"))}
				if kind == Portable {
					if m.lis, err = net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
						t.Fatal(err)
					}
					defer m.lis.Close()
				}
				defer func() {
					for _, r := range m.live() {
						_ = b.remove(r.s)
						r.removed = true
						r.peerClose()
					}
					m.settle(t)
					b.close()
				}()
				t.Repeat(map[string]func(*rapid.T){
					"add":    m.add,
					"write":  m.write,
					"drain":  m.drain,
					"remove": m.remove,
					"wake": func(t *rapid.T) {
						b.wake()
						m.wakeDue = true
					},
					"wake during a wait": func(t *rapid.T) {
						// The wake must end the wait it comes during, not
						// wait for the deadline: a lost eventfd write would
						// show as a 3 s wait, the next one reporting woken.
						m.wakeDue = true
						woke := make(chan time.Time, 1)
						go func() { b.wake(); woke <- time.Now() }()
						deadline := time.Now().Add(10 * time.Second)
						for m.wakeDue && time.Now().Before(deadline) {
							m.wait(t, 3*time.Second)
						}
						seen, at := time.Now(), <-woke
						if m.wakeDue {
							t.Fatal("a wake from another goroutine during a wait never came")
						}
						if late := seen.Sub(at); late > time.Second {
							t.Fatalf("a wake from another goroutine during a wait came %v after it", late)
						}
					},
					"wait": func(t *rapid.T) {
						m.wait(t, time.Duration(rapid.IntRange(0, 3).Draw(t, "ms"))*time.Millisecond)
					},
					"settle": m.settle,
				})
			})
		})
	}
}
