package dist_test

// The accept path under silent sockets, and the refusals' counters and
// log (accept.go): a peer that speaks promptly gets in whatever others
// hold open, each refusal is counted under its cause, and the log lines
// are bounded.

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/handshake"
)

// silentAttack opens k sockets to addr that never send a byte, at rate a
// second, then renews each every renew (closes the oldest and opens one
// more), until ctx ends; it closes them all before it returns. ramped is
// called once the first k are open. It counts what it opened and the
// dials that failed.
type silentAttack struct {
	opened, failed atomic.Int64
}

func (a *silentAttack) run(ctx context.Context, addr string, k int, rate float64, renew time.Duration, ramped func()) {
	ring := make([]net.Conn, 0, k)
	defer func() {
		for _, c := range ring {
			if c != nil {
				c.Close()
			}
		}
	}()
	d := net.Dialer{Timeout: time.Second}
	open := func() net.Conn {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			a.failed.Add(1)
			return nil
		}
		a.opened.Add(1)
		return c
	}
	// Pacing: the i-th socket is due at start + i·interval. This is load
	// generation; no test waits on it.
	pace := func(start time.Time, i int, interval time.Duration) bool {
		if w := time.Until(start.Add(time.Duration(i) * interval)); w > 0 {
			t := time.NewTimer(w)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return false
			}
		}
		return ctx.Err() == nil
	}
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	for i := range k {
		if !pace(start, i, interval) {
			return
		}
		ring = append(ring, open())
	}
	ramped()
	start, interval = time.Now(), renew/time.Duration(k)
	for i := 0; ; i++ {
		if !pace(start, i, interval) {
			return
		}
		j := i % k
		if ring[j] != nil {
			ring[j].Close()
		}
		ring[j] = open()
	}
}

// pingFresh pings n from a new peer node each time: what a restarted peer,
// or a supervisor's remote restart on a new node, does.
func pingFresh(t *testing.T, n *testNode, within time.Duration) (time.Duration, error) {
	t.Helper()
	p := startNode(t, n.epmdPort, dist.Config{})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := p.Ping(ctx, n.Name())
	d := time.Since(start)
	if err := p.Stop(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	return d, err
}

// Silent sockets from the peers' own address, four times the slots and
// renewed, do not keep new peers out: every one gets in, and the node
// holds no more than MaxHandshakes handshakes.
func TestSilentSocketsDoNotLockOutNewPeers(t *testing.T) {
	port := testEPMD(t)
	n := startNode(t, port, dist.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var a silentAttack
	ramped := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.run(ctx, n.Addr().String(), 4*dist.DefaultMaxHandshakes, 2000, time.Second, func() { close(ramped) })
	}()
	defer func() { cancel(); wg.Wait() }()
	<-ramped
	eventually(t, 10*time.Second, "the node to accept the silent sockets", func() bool {
		st := n.Stats()
		return st.Refused.Total()+uint64(st.Handshakes) >= uint64(4*dist.DefaultMaxHandshakes)
	})
	var worst time.Duration
	for i := range 10 {
		d, err := pingFresh(t, n, 5*time.Second)
		if err != nil {
			t.Fatalf("peer %d: %v after %v (stats %+v)", i, err, d, n.Stats())
		}
		worst = max(worst, d)
		if h := n.Stats().Handshakes; h > dist.DefaultMaxHandshakes {
			t.Fatalf("%d handshakes under way, more than MaxHandshakes", h)
		}
	}
	st := n.Stats()
	t.Logf("10 peers in, the slowest in %v; %d silent sockets opened, %d failed; stats %+v", worst, a.opened.Load(), a.failed.Load(), st)
	if st.Accepted < 10 || st.Refused.Evicted == 0 {
		t.Errorf("Accepted %d, Evicted %d: want at least 10 accepted and evictions", st.Accepted, st.Refused.Evicted)
	}
}

// Each way a handshake can fail is counted under its cause, once.
func TestRefusalsCountedByCause(t *testing.T) {
	port := testEPMD(t)
	n := startNode(t, port, dist.Config{NameTimeout: 300 * time.Millisecond, HandshakeTimeout: 2 * time.Second, MaxHandshakes: 2})
	want := dist.Refusals{}
	check := func(what string) {
		t.Helper()
		eventually(t, 10*time.Second, what+" counted", func() bool { return n.Stats().Refused == want })
	}
	mandatory := handshake.Mandatory | handshake.Published

	// Silent past NameTimeout.
	closedByNode(t, dialRaw(t, n))
	want.Timeout++
	check("a silent socket")

	// A name, then silence past HandshakeTimeout: the name stretched the
	// deadline, so the timeout comes later than NameTimeout.
	c := dialRaw(t, n)
	start := time.Now()
	writeName(t, c, uniqueName("slow"), mandatory)
	closedByNode(t, c)
	if d := time.Since(start); d < time.Second {
		t.Errorf("a named handshake timed out after %v, before HandshakeTimeout", d)
	}
	want.Timeout++
	check("a named handshake that stalls")

	// Garbage.
	c = dialRaw(t, n)
	c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	closedByNode(t, c)
	want.Malformed++
	check("garbage")

	// Closed by the peer before a word.
	c = dialRaw(t, n)
	c.Close()
	want.Closed++
	check("a peer that closes")

	// Lacking mandatory flags.
	c = dialRaw(t, n)
	writeName(t, c, uniqueName("old"), handshake.Published)
	closedByNode(t, c)
	want.NotAllowed++
	check("a peer without mandatory flags")

	// A wrong cookie.
	c = dialRaw(t, n)
	cfg := &handshake.Config{Name: uniqueName("bad"), Creation: 1, Cookie: "wrong", Flags: mandatory}
	if _, err := handshake.Dial(c, cfg, string(n.Name()), nil); !errors.Is(err, handshake.ErrCookie) {
		t.Fatalf("a wrong cookie: %v", err)
	}
	want.Cookie++
	check("a wrong cookie")

	// The log lines, one a refusal (far below the bound).
	for _, line := range []string{"an unnamed peer (127.0.0.1:", "timed out: no name within 300ms", "timed out: not done within 2s", "protocol error", "connection closed mid-handshake",
		"mandatory flags", "wrong cookie"} {
		if !n.logs.has(line) {
			t.Errorf("no log line with %q", line)
		}
	}
	if st := n.Stats(); st.Accepted != 0 || st.RefusalsUnlogged != 0 || st.Handshakes != 0 {
		t.Errorf("stats %+v: want nothing accepted, nothing unlogged, no handshake under way", st)
	}
	if err := pingFresh1(t, n); err != nil {
		t.Fatalf("a good peer after the refusals: %v", err)
	}
	if st := n.Stats(); st.Accepted != 1 || st.Refused != want {
		t.Errorf("after a good peer: %+v, want 1 accepted and the refusals unchanged", st)
	}
}

// Three silent sockets for two slots: the oldest is evicted, and counted.
func TestRefusalsCountEvictions(t *testing.T) {
	port := testEPMD(t)
	n := startNode(t, port, dist.Config{MaxHandshakes: 2})
	first := dialRaw(t, n)
	eventually(t, 5*time.Second, "the first socket admitted", func() bool { return n.Stats().Handshakes == 1 })
	second := dialRaw(t, n)
	eventually(t, 5*time.Second, "the second socket admitted", func() bool { return n.Stats().Handshakes == 2 })
	third := dialRaw(t, n)
	closedByNode(t, first)
	eventually(t, 5*time.Second, "the eviction counted", func() bool { return n.Stats().Refused.Evicted == 1 })
	if !n.logs.has("evicted: all 2 handshake slots in use") {
		t.Errorf("no log line for the eviction")
	}
	second.Close()
	third.Close()
	want := dist.Refusals{Evicted: 1, Closed: 2}
	eventually(t, 5*time.Second, "the two others' closes counted", func() bool { return n.Stats().Refused == want })
	if h := n.Stats().Handshakes; h != 0 {
		t.Errorf("%d handshakes under way, want 0", h)
	}
}

func pingFresh1(t *testing.T, n *testNode) error {
	_, err := pingFresh(t, n, 10*time.Second)
	return err
}

// writeName sends a version 6 name message.
func writeName(t *testing.T, c net.Conn, name string, flags handshake.Flags) {
	t.Helper()
	b := []byte{0, 0, 'N'}
	for i := 7; i >= 0; i-- {
		b = append(b, byte(uint64(flags)>>(8*i)))
	}
	b = append(b, 0, 0, 0, 1, byte(len(name)>>8), byte(len(name)))
	b = append(b, name...)
	b[0], b[1] = byte((len(b)-2)>>8), byte(len(b)-2)
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// 1,000 wrong cookies give at most the burst's lines (10) and one summary
// that counts the rest; Stats counts them all.
func TestRefusalLogIsRateBounded(t *testing.T) {
	defer dist.SetRefusalLogWindow(time.Hour)() // no window ends during the test
	port := testEPMD(t)
	n := startNode(t, port, dist.Config{})
	const attempts, workers = 1000, 8
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= attempts {
				cfg := &handshake.Config{Name: uniqueName("bad"), Creation: 1, Cookie: "wrong", Flags: handshake.Mandatory}
				c, err := net.Dial("tcp", n.Addr().String())
				if err != nil {
					t.Error(err)
					return
				}
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := handshake.Dial(c, cfg, string(n.Name()), nil); !errors.Is(err, handshake.ErrCookie) {
					t.Errorf("a wrong cookie: %v", err)
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	eventually(t, 10*time.Second, "1,000 refusals counted", func() bool { return n.Stats().Refused.Cookie == attempts })
	if lines := n.logs.count("wrong cookie"); lines != 10 {
		t.Errorf("%d lines for 1,000 wrong cookies, want the burst of 10", lines)
	}
	if st := n.Stats(); st.RefusalsUnlogged != attempts-10 {
		t.Errorf("RefusalsUnlogged %d, want %d", st.RefusalsUnlogged, attempts-10)
	}
	// The summary comes at the window's end, or at the node's stop.
	if err := n.Stop(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if !n.logs.has("dist: 990 more refused connections not logged (bad cookie 990)") {
		t.Errorf("no summary line; log:\n%s", n.logs)
	}
}

// The summary line comes when the window ends, without a stop.
func TestRefusalLogSummaryAtWindowEnd(t *testing.T) {
	defer dist.SetRefusalLogWindow(time.Second)()
	port := testEPMD(t)
	n := startNode(t, port, dist.Config{})
	// 25 refusals at once, well within a window even on a loaded machine.
	const k = 25
	var wg sync.WaitGroup
	for range k {
		c := dialRaw(t, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Write([]byte{0, 0})
			closedByNode(t, c)
		}()
	}
	wg.Wait()
	eventually(t, 10*time.Second, "25 refusals counted", func() bool { return n.Stats().Refused.Malformed == k })
	summary := regexp.MustCompile(`dist: (\d+) more refused connections not logged \(malformed (\d+)\) in the last 1s`)
	total := func() (sum int) {
		for _, l := range strings.Split(n.logs.String(), "\n") {
			if m := summary.FindStringSubmatch(l); m != nil {
				k, _ := strconv.Atoi(m[1])
				sum += k
			}
		}
		return sum
	}
	unlogged := int(n.Stats().RefusalsUnlogged)
	lines := n.logs.count("message of 0 bytes")
	if lines+unlogged != k || unlogged == 0 {
		t.Errorf("%d lines and %d unlogged for %d refusals, want every one either logged or counted, and some counted", lines, unlogged, k)
	}
	eventually(t, 10*time.Second, "the summaries to count every unlogged refusal", func() bool { return total() == unlogged })
}
