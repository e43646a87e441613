package dist

// Incoming connections: the accept loop, the handshake slots (slots.go),
// and the refusals, counted by cause and logged at a bounded rate.
//
// # The problem
//
// Until a peer has proved the cookie, anyone who can reach the port can
// open a connection, and each costs the node an fd, a goroutine blocked in
// a read and its handshake buffer. They must be bounded; but a bound that
// refuses past it hands the node to whoever fills it first: 64 silent
// sockets, renewed every HandshakeTimeout, kept every legitimate peer out
// (a new one, a restarted one, a supervisor restarting a remote child).
// OTP has no bound: a process per accepted socket, each with its
// net_setuptime timer, so under 10,000 silent sockets a new peer still
// gets in within a millisecond, and the node pays a process and a port
// for every one of them.
//
// # Approaches rejected
//
//   - No bound, as OTP: a goroutine (8 KiB of stack with the handshake's
//     buffer) and an fd for every socket an attacker holds open.
//   - A fixed share per source address: the attacker and the peer are
//     often one source (loopback, one NAT, one Kubernetes node), and the
//     share is what the attacker fills.
//   - No goroutine until the first byte is readable: that is io/'s poller,
//     which the node does not use for its connections (docs/distribution.md,
//     "Reader and writer"), and it bounds memory, not the slots.
//
// # The protocol
//
// Admission. The slots are a table in accept order (gate, MaxHandshakes
// entries). A connection is admitted at once while a slot is free. When
// none is, the newcomer takes one (Eviction, below); the loser's socket is
// closed by the accept loop, and its goroutine, blocked reading it, sees
// the close and exits. A peer that speaks promptly therefore always gets
// a slot, and keeps it against silent sockets.
//
// Eviction. The victim is in the source address that holds the most slots,
// the newcomer counted in its own (its own when it ties): a source loses
// slots only while it holds at least as many as any other, so one address
// cannot keep the slots from another, and a source holding fewer than
// MaxHandshakes/k of k competing sources never loses one. In that source,
// the victim is the oldest silent slot (no name read yet), else the
// oldest. A peer that sends its name becomes named: from the same source
// as a silent attacker (127.0.0.1 in the tests), it is evicted only once
// its source has no silent slot left.
//
// Deadlines. A connection must send its name within NameTimeout of being
// accepted (2 s), and finish within HandshakeTimeout (7 s): a silent
// socket holds a slot 2 s at most even when nobody needs it.
//
// Refusal. An evicted connection's goroutine still runs until it has seen
// the close; running (table and evicted) is bounded by 2·MaxHandshakes,
// and past it a new connection is closed by the accept loop at once, with
// no goroutine and no buffer (OverLimit): only when MaxHandshakes evicted
// goroutines have not been scheduled since.
//
// # The race
//
// Eviction closes a socket that its goroutine is reading, perhaps at the
// instant its handshake completes. The goroutine learns its fate only from
// release, under the gate's lock: a slot found evicted or stopped is never
// attached, even if its handshake succeeded (its socket is closed). Node
// stop is the same: closeAll marks the node closed, then the gate shut and
// its sockets closed; a handshake released before that is attached, and
// attach, under n.mu, sees the node closed or is seen by closeAll.
//
// # Logging
//
// Every refusal is counted (Stats.Refused). Lines are bounded: the first
// refusalLogBurst refusals of a window each get their line; the rest are
// counted, and when the window ends one line says how many, by cause. The
// window's timer is a Helper of the node, accounted for by whoever stops
// it (refusalLog.arm).

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/dist/handshake"
)

// Defaults of the accept path.
const (
	DefaultMaxHandshakes = 64
	DefaultNameTimeout   = 2 * time.Second
)

// refusalLogBurst refusal lines are logged in each window; the rest are
// summed up at its end.
const refusalLogBurst = 10

// refusalLogWindow is the window of the refusal log (a variable for the
// tests: SetRefusalLogWindow).
var refusalLogWindow atomic.Int64

func init() { refusalLogWindow.Store(int64(10 * time.Second)) }

// cause is why an incoming connection was refused.
type cause uint8

const (
	causeTimeout cause = iota
	causeCookie
	causeEvicted
	causeOverLimit
	causeMalformed
	causeNotAllowed
	causeClosed
	numCauses
)

var causeNames = [numCauses]string{"timeout", "bad cookie", "evicted", "over limit", "malformed", "not allowed", "closed by peer"}

// Refusals counts incoming connections whose handshake did not complete,
// by cause. A simultaneous connect's losing attempt (nok, or false to
// alive) is not a refusal, and a node stopping refuses nothing.
type Refusals struct {
	// Timeout: no name within NameTimeout, or the handshake past
	// HandshakeTimeout.
	Timeout uint64
	// Cookie: the peer's challenge reply did not match the cookie.
	Cookie uint64
	// Evicted: the handshake's slot was taken by a newer connection when
	// all MaxHandshakes were in use.
	Evicted uint64
	// OverLimit: closed at accept, with no handshake started: too many
	// evicted handshakes had not ended yet.
	OverLimit uint64
	// Malformed: the peer broke the protocol (a bad message, a bad name).
	Malformed uint64
	// NotAllowed: the peer lacked mandatory flags or used this node's name.
	NotAllowed uint64
	// Closed: the peer closed or reset the connection mid-handshake.
	Closed uint64
}

// Total is the sum of the causes.
func (r Refusals) Total() uint64 {
	return r.Timeout + r.Cookie + r.Evicted + r.OverLimit + r.Malformed + r.NotAllowed + r.Closed
}

// acceptStats are the accept path's counters (Stats).
type acceptStats struct {
	accepted atomic.Uint64
	refused  [numCauses]atomic.Uint64
	unlogged atomic.Uint64
}

func (s *acceptStats) refusals() Refusals {
	return Refusals{
		Timeout: s.refused[causeTimeout].Load(), Cookie: s.refused[causeCookie].Load(),
		Evicted: s.refused[causeEvicted].Load(), OverLimit: s.refused[causeOverLimit].Load(),
		Malformed: s.refused[causeMalformed].Load(), NotAllowed: s.refused[causeNotAllowed].Load(),
		Closed: s.refused[causeClosed].Load(),
	}
}

func (n *Node) acceptLoop() {
	for {
		nc, err := n.ln.Accept()
		if err != nil {
			select {
			case <-n.stopped:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			n.logf(levelError, "dist: accept: %v", err)
			select { // e.g. out of fds: back off a little
			case <-n.stopped:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		t0 := time.Now()
		s, victim, res := n.gate.admit(sourceOf(nc.RemoteAddr()), nc)
		switch res {
		case gateShut:
			nc.Close()
			continue
		case overLimit:
			nc.Close()
			n.refused(causeOverLimit, levelWarn, "dist: connection from %s refused: %d handshakes under way or ending", nc.RemoteAddr(), 2*n.cfg.MaxHandshakes)
			continue
		case evicting:
			victim.nc.Close() // its goroutine counts it (release)
		}
		n.goHelper(func() { n.accept(s, nc, t0) })
	}
}

// accept runs the acceptor's handshake on nc, accepted at t0 and admitted
// to slot s, and attaches the connection if it completes.
func (n *Node) accept(s *hsSlot, nc net.Conn, t0 time.Time) {
	nc.SetDeadline(t0.Add(n.cfg.NameTimeout))
	var p *peer
	info, err := handshake.Accept(nc, &n.hs, func(hp handshake.Peer) handshake.Status {
		if n.gate.named(s) { // a closed socket's deadline does not matter
			nc.SetDeadline(t0.Add(n.cfg.HandshakeTimeout))
		}
		var st handshake.Status
		p, st = n.decide(hp)
		n.logf(levelDebug, "dist: handshake from %s (%s): status %s", hp.Name, nc.RemoteAddr(), st)
		return st
	})
	ended := n.gate.release(s)
	if err == nil && ended != slotNamed {
		err = net.ErrClosed // completed as the gate closed it: not attached
	}
	if err != nil {
		// The record first: a peer that sees the close may try again at
		// once, and must not find this attempt still under way (nok).
		n.handshakeFailed(p, false)
		nc.Close()
		n.refuseHandshake(ended, info.Name, nc.RemoteAddr(), err)
		return
	}
	nc.SetDeadline(time.Time{})
	n.acceptStats.accepted.Add(1)
	n.attach(p, nc, info)
}

// refuseHandshake counts and logs a failed incoming handshake.
func (n *Node) refuseHandshake(ended slotState, name string, addr net.Addr, err error) {
	who := name
	if who == "" {
		who = "an unnamed peer"
	}
	who += " (" + addr.String() + ")"
	var re *handshake.RefusedError
	switch {
	case ended == slotStopped:
	case ended == slotEvicted:
		n.refused(causeEvicted, levelWarn, "dist: handshake from %s evicted: all %d handshake slots in use", who, n.cfg.MaxHandshakes)
	case errors.Is(err, handshake.ErrCookie):
		n.refused(causeCookie, levelError, "dist: ** Connection attempt from node %s rejected: invalid challenge reply (wrong cookie) **", who)
	case errors.Is(err, handshake.ErrFlags):
		n.refused(causeNotAllowed, levelError, "dist: ** Connection attempt from node %s rejected: %v **", who, err)
	case errors.As(err, &re):
		if re.Status == handshake.StatusNotAllowed {
			n.refused(causeNotAllowed, levelWarn, "dist: handshake from %s: %v", who, err)
		} else {
			// nok, or false to alive: a simultaneous connect's losing
			// attempt, no refusal.
			n.logf(levelDebug, "dist: handshake from %s: %v", who, err)
		}
	case errors.Is(err, os.ErrDeadlineExceeded) && ended == slotSilent:
		n.refused(causeTimeout, levelWarn, "dist: handshake from %s timed out: no name within %v", who, n.cfg.NameTimeout)
	case errors.Is(err, os.ErrDeadlineExceeded):
		n.refused(causeTimeout, levelWarn, "dist: handshake from %s timed out: not done within %v", who, n.cfg.HandshakeTimeout)
	case errors.Is(err, handshake.ErrClosed):
		n.refused(causeClosed, levelWarn, "dist: handshake from %s failed: %v", who, err)
	case errors.Is(err, handshake.ErrProtocol):
		n.refused(causeMalformed, levelWarn, "dist: handshake from %s failed: %v", who, err)
	default: // a reset, a broken pipe
		n.refused(causeClosed, levelWarn, "dist: handshake from %s failed: %v", who, err)
	}
}

// refused counts a refusal of cause c and logs its line, within the
// refusal log's bound.
func (n *Node) refused(c cause, lvl slog.Level, format string, args ...any) {
	n.acceptStats.refused[c].Add(1)
	if !n.logEnabled(lvl) {
		return
	}
	if n.refusalLog.admit(n, c, lvl) {
		n.logf(lvl, format, args...)
	}
}

// refusalLog bounds the refusal lines: refusalLogBurst a window, then a
// summary at the window's end of those not written.
type refusalLog struct {
	mu         sync.Mutex
	start      time.Time         // guarded by mu: the window's start
	written    int               // guarded by mu: lines written in the window
	suppressed [numCauses]uint64 // guarded by mu: lines not written, by cause
	level      slog.Level        // guarded by mu: the highest level not written
	timer      *time.Timer       // guarded by mu: the summary's, while armed
	exited     func()            // guarded by mu: the armed timer's Helper accounting
	shut       bool              // guarded by mu: no more timers
	window     time.Duration     // immutable after Start
}

// admit says whether a refusal of cause c at level lvl gets its line; if
// not, it is counted for the window's summary.
func (l *refusalLog) admit(n *Node, c cause, lvl slog.Level) bool {
	l.mu.Lock()
	now := time.Now()
	var summary string
	var slvl slog.Level
	if now.Sub(l.start) >= l.window {
		// A new window. The old one's summary is written here if its
		// timer has not fired yet (it finds nothing left).
		summary, slvl = l.takeSummaryLocked()
		l.start, l.written = now, 0
	}
	ok := l.written < refusalLogBurst
	if ok {
		l.written++
	} else {
		if l.sum() == 0 {
			l.level = lvl
			l.armLocked(n, l.start.Add(l.window).Sub(now))
		}
		l.suppressed[c]++
		l.level = max(l.level, lvl)
		n.acceptStats.unlogged.Add(1)
	}
	l.mu.Unlock()
	if summary != "" {
		n.logf(slvl, "%s", summary)
	}
	return ok
}

func (l *refusalLog) sum() uint64 {
	var t uint64
	for _, k := range l.suppressed {
		t += k
	}
	return t
}

// takeSummaryLocked returns the summary line of what was not written (""
// if nothing) and clears it.
func (l *refusalLog) takeSummaryLocked() (string, slog.Level) {
	total := l.sum()
	if total == 0 {
		return "", 0
	}
	var parts []string
	for c, k := range l.suppressed {
		if k > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", causeNames[c], k))
		}
	}
	s := fmt.Sprintf("dist: %d more refused connections not logged (%s) in the last %v",
		total, strings.Join(parts, ", "), l.window)
	l.suppressed = [numCauses]uint64{}
	return s, l.level
}

// armLocked starts the timer that writes the window's summary, unless the
// node is stopping. The timer's goroutine is a Helper of the node: its
// accounting (exited, n.wg) is released by the goroutine, or by close if
// close stops the timer first. n.wg.Add runs on a goroutine of the node
// (a refusal is counted by one), so it never races n.wg.Wait from zero.
func (l *refusalLog) armLocked(n *Node, d time.Duration) {
	if l.shut || l.timer != nil {
		return
	}
	l.exited = n.sys.Helper()
	n.wg.Add(1)
	l.timer = time.AfterFunc(d, func() {
		l.mu.Lock()
		summary, lvl := l.takeSummaryLocked()
		exited := l.exited
		l.timer, l.exited = nil, nil
		l.mu.Unlock()
		if summary != "" {
			n.logf(lvl, "%s", summary)
		}
		exited()
		n.wg.Done()
	})
}

// close writes what is left to summarise and arms no more timers.
func (l *refusalLog) close(n *Node) {
	l.mu.Lock()
	l.shut = true
	if l.timer != nil && l.timer.Stop() {
		// The callback will not run: its accounting is ours to release.
		l.exited()
		n.wg.Done()
		l.timer, l.exited = nil, nil
	}
	summary, lvl := l.takeSummaryLocked()
	l.mu.Unlock()
	if summary != "" {
		n.logf(lvl, "%s", summary)
	}
}
