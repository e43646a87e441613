//go:build linux

package netio

import (
	"bytes"
	"errors"
	"log"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colonyrt/colony/actor"
)

func fdOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

// A removed registration's fd stays open while its poll is in the
// kernel, and is closed when the poll's last completion is reaped
// (cancel, wait, close: uring_linux.go, U2); the backend is busy until
// then, so the poller does not exit under it.
func TestUringRemoveWaitsForCancelledPoll(t *testing.T) {
	b, err := newUring()
	if err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	defer b.close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	s := &sock{fd: fds[0], gen: 7, ep: &fdEndpoint{fds[0]}}
	if err := b.add(s); err != nil {
		t.Fatal(err)
	}
	evs := make([]ioEvent, 16)
	// The socket is writable at once: the multishot poll's first CQE
	// names (slot, gen). (add's wake-up may come first.)
	var got []ioEvent
	for deadline := time.Now().Add(5 * time.Second); ; {
		n, err := b.wait(evs, deadline)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, evs[:n]...)
		if i := slices.IndexFunc(got, func(ev ioEvent) bool { return ev.gen != 0 }); i >= 0 {
			if ev := got[i]; ev.slot != int32(fds[0]) || ev.gen != 7 || ev.mask&evOut == 0 {
				t.Fatalf("first event %+v, want evOut for (%d, 7)", ev, fds[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event for the socket in 5 s (events %v)", got)
		}
	}
	if err := b.remove(s); err != nil {
		t.Fatal(err)
	}
	if !fdOpen(fds[0]) || !b.busy() {
		t.Fatalf("right after remove: fd open %v, busy %v; want the fd open until the poll ends, and busy", fdOpen(fds[0]), b.busy())
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.busy() {
		if _, err := b.wait(evs, deadline); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled poll's last completion never came")
		}
	}
	if fdOpen(fds[0]) {
		t.Fatal("the poll ended and the fd is still open")
	}
}

// An SQE the kernel does not take is an error that names it, and stays
// in the SQ ring: the next enter submits it, so nothing queued is lost
// (uring_linux.go, U3).
func TestUringRefusedSubmitIsLoudAndKept(t *testing.T) {
	b, err := newUring()
	if err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	defer b.close()
	if err := b.start(); err != nil {
		t.Fatal(err)
	}
	ring := b.fd
	notRing, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(notRing)
	k, _ := b.fill() // the wake-up's poll, queued by newUring
	b.fd = notRing   // io_uring_enter on an fd that is no ring: nothing submitted
	_, err = b.enter(k, enterNoWait, 0)
	b.fd = ring
	if err == nil || !strings.Contains(err.Error(), "submitted 0 of 1") || !strings.Contains(err.Error(), "op 6") {
		t.Fatalf("submit to no ring: %v, want an error saying 0 of 1 submitted, naming the POLL_ADD", err)
	}
	if left := *b.sqTail - *b.sqHead; left != 1 {
		t.Fatalf("after a refused submit the SQ ring holds %d SQEs, want the refused one", left)
	}
	// The next wait submits it: the wake-up's poll is armed, and a wake
	// written to the eventfd (woken cleared, as if reported) ends a sleep.
	evs := make([]ioEvent, 16)
	if _, err := b.wait(evs, time.Now().Add(10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if left := *b.sqTail - *b.sqHead; left != 0 {
		t.Fatalf("after a wait the SQ ring still holds %d SQEs", left)
	}
	b.wake()
	b.woken.Store(false) // only the eventfd's poll can end the sleep now
	n, err := b.wait(evs, time.Now().Add(5*time.Second))
	if err != nil || n == 0 || evs[0].gen != 0 {
		t.Fatalf("wait after a wake: %v (n %d, err %v), want the wake-up", evs[:n], n, err)
	}
}

// Where io_uring_setup fails, a System asking for Uring gets epoll, and
// a log line says why.
func TestUringFallsBackToEpoll(t *testing.T) {
	refused := errors.New("io_uring_setup: operation not permitted (test)")
	testURingSetupErr.Store(&refused)
	defer testURingSetupErr.Store(nil)
	var logged bytes.Buffer
	out := log.Writer()
	log.SetOutput(&logged)
	defer log.SetOutput(out)
	loggedBefore := len(uringFallbackLogged) > 0 // the line is written once a process
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown(t.Context())
	if err := SetBackend(sys, Uring); err != nil {
		t.Fatal(err)
	}
	owner, err := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Listen(sys, owner, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := BackendOf(sys); got != Epoll {
		t.Fatalf("BackendOf after a refused io_uring_setup: %s, want epoll", got)
	}
	if !loggedBefore && !strings.Contains(logged.String(), "io_uring unavailable") {
		t.Fatalf("no log line for the fallback (log: %q)", logged.String())
	}
}

// An idle wait lasts to its deadline: the nap that keeps the P ends at
// uringNap, and the sleep that gives it up takes the rest (U8); neither
// returns early.
func TestUringIdleWaitLastsToItsDeadline(t *testing.T) {
	b, err := newUring()
	if err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	defer b.close()
	evs := make([]ioEvent, 16)
	if _, err := b.wait(evs, time.Now().Add(time.Millisecond)); err != nil { // submits the wake-up's poll
		t.Fatal(err)
	}
	for _, d := range []time.Duration{uringNap / 2, 3 * uringNap, 20 * time.Millisecond} {
		start := time.Now()
		n, err := b.wait(evs, start.Add(d))
		if err != nil || n != 0 {
			t.Fatalf("idle wait of %v: %v (n %d, err %v), want no events", d, evs[:n], n, err)
		}
		if took := time.Since(start); took < d {
			t.Fatalf("idle wait of %v returned after %v", d, took)
		}
	}
}
