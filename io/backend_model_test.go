//go:build linux

package netio

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"
)

// modelReg is one registration of the backend model: a socketpair's end
// registered with the backend, the other end the test writes to.
type modelReg struct {
	s       *sock
	peer    int
	unread  int  // bytes written to the peer and not yet read from s
	wantIn  bool // written since the last input event or read: one is owed
	sawOut  bool // the registration's first event (room) came
	removed bool // remove was called; its fd closes when the kernel is done
	closed  bool // the fd is closed (epoll at once, uring once fdGone is)
}

// backendModel drives one fd backend (epoll or io_uring) through the
// calls the poller makes, on one goroutine as the poller does, and
// checks the protocol of backend.go against a model of what is owed:
//   - every event names a registration that is live, or removed and not
//     yet closed (invariants 1 and 2): never one already closed, never an
//     unknown (slot, gen);
//   - input written to a registered socket is followed by an input event
//     for it, and a wake by a wake-up event (3 and 4), whether the wake
//     came before the wait or from another goroutine during it;
//   - a removed registration's fd is closed, and busy false, once the
//     kernel is done (5).
type backendModel struct {
	b       backend
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
		if r.s.fdGone == nil { // epoll: closed by remove
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
		case closedBefore[ev.gen]:
			t.Fatalf("event for (slot %d, gen %d) after its fd was closed", ev.slot, ev.gen)
		case ev.slot != int32(r.s.fd):
			t.Fatalf("event for gen %d names slot %d, registered as fd %d", ev.gen, ev.slot, r.s.fd)
		}
		if ev.mask&(evIn|evRdHup|evHup|evErr) != 0 {
			r.wantIn = false
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
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	m.gen++
	s := &sock{fd: fds[0], gen: m.gen, ep: &fdEndpoint{fd: fds[0]}}
	if err := m.b.add(s); err != nil {
		t.Fatal(err)
	}
	r := &modelReg{s: s, peer: fds[1]}
	m.regs = append(m.regs, r)
	m.byGen[s.gen] = r
}

func (m *backendModel) write(t *rapid.T) {
	live := m.live()
	if len(live) == 0 {
		t.Skip("nothing registered")
	}
	r := rapid.SampledFrom(live).Draw(t, "reg")
	k := rapid.IntRange(1, 300).Draw(t, "bytes")
	if n, err := unix.Write(r.peer, make([]byte, k)); err != nil || n != k {
		t.Fatalf("write to the peer: %d, %v", n, err)
	}
	r.unread += k
	r.wantIn = true
}

// drain reads what the socket has, as a sock does after an input event,
// and checks it is all that was written.
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
	if got != r.unread {
		t.Fatalf("read %d bytes from fd %d, %d were written", got, r.s.fd, r.unread)
	}
	r.unread = 0
	r.wantIn = false // read to EAGAIN: nothing is owed (an edge may still come)
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
	unix.Close(r.peer)
}

func TestFdBackendsKeepTheEventProtocol(t *testing.T) {
	for _, kind := range []Backend{Epoll, Uring} {
		t.Run(string(kind), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				var b backend
				var err error
				if kind == Uring {
					b, err = newUring()
				} else {
					b, err = newEpoll()
				}
				if err != nil {
					t.Skipf("%s unavailable: %v", kind, err)
				}
				m := &backendModel{b: b, byGen: map[uint32]*modelReg{}, evs: make([]ioEvent, rapid.IntRange(1, 8).Draw(t, "batch"))}
				defer func() {
					for _, r := range m.live() {
						_ = b.remove(r.s)
						r.removed = true
						unix.Close(r.peer)
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
