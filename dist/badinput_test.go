package dist_test

// Bad input from the network: whatever a peer sends, the connection it
// came on is closed and logged, the node and its other connections keep
// running, and nothing is allocated past the stated bounds (frame and
// message sizes capped by MaxMessage and checked before reading; see also
// TestFrameReaderAllocatesAsBytesArrive).

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/handshake"
)

// badInputNodes starts a node under attack and a good peer connected to
// it, with an echo server on the node.
func badInputNodes(t *testing.T, cfg dist.Config) (n, good *testNode) {
	t.Helper()
	port := testEPMD(t)
	n = startNode(t, port, cfg)
	good = startNode(t, port, dist.Config{Cookie: cfg.Cookie, TickTime: cfg.TickTime})
	if _, err := n.sys.Spawn(&echo{}, actor.Name("echo")); err != nil {
		t.Fatal(err)
	}
	if err := good.Ping(ctxT(t, 10*time.Second), n.Name()); err != nil {
		t.Fatal(err)
	}
	return n, good
}

// stillWorks checks that the good peer's connection still carries messages
// and that a new connection can be made.
func stillWorks(t *testing.T, n, good *testNode) {
	t.Helper()
	self, inbox := spawnCollector(t, good.sys, 4)
	if err := good.SendName(self, "echo", n.Name(), etf.Tuple{self, "still here"}); err != nil {
		t.Fatal(err)
	}
	if v := recv(t, inbox, 10*time.Second); v != "still here" {
		t.Fatalf("echo: %#v", v)
	}
	late := startNode(t, good.epmdPort, dist.Config{Cookie: "cookie", TickTime: n.tick})
	if err := late.Ping(ctxT(t, 10*time.Second), n.Name()); err != nil {
		t.Fatalf("a new peer after the bad input: %v", err)
	}
}

func dialRaw(t *testing.T, n *testNode) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", n.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// closedByNode waits until the node closes c (a read returns EOF or a
// reset), discarding what the node sends first.
func closedByNode(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := io.Copy(io.Discard, c); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("the node did not close the connection")
		}
	}
}

// handshaken is a raw client that passed the handshake as node
// "evil...@127.0.0.1" with the right cookie.
func handshaken(t *testing.T, n *testNode) net.Conn {
	t.Helper()
	c := dialRaw(t, n)
	cfg := &handshake.Config{Name: uniqueName("evil"), Creation: 7, Cookie: "cookie",
		Flags: handshake.Mandatory | handshake.Published | handshake.Fragments}
	if _, err := handshake.Dial(c, cfg, string(n.Name()), nil); err != nil {
		t.Fatalf("raw handshake: %v", err)
	}
	return c
}

func frame(body ...[]byte) []byte {
	var b []byte
	for _, p := range body {
		b = append(b, p...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

var termEnc *etf.Encoder // the attacked node's: its pids encode as its own

func term(t *testing.T, v any) []byte {
	b, err := termEnc.AppendVersioned(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBadInputBeforeHandshake(t *testing.T) {
	n, good := badInputNodes(t, dist.Config{HandshakeTimeout: time.Second})
	cases := map[string][]byte{
		"garbage":          []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"huge length":      {0xff, 0xff, 'N', 1, 2, 3},
		"truncated name":   {0, 40, 'N', 0, 0, 0, 0},
		"zero length":      {0, 0},
		"name without '@'": append([]byte{0, 17, 'N', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2}, "ab"...),
	}
	for what, in := range cases {
		c := dialRaw(t, n)
		c.Write(in) // "truncated name" then says nothing: the handshake timeout closes it
		closedByNode(t, c)
		t.Logf("%s: closed", what)
	}
	// A client that connects and says nothing is closed by the handshake
	// timeout.
	start := time.Now()
	closedByNode(t, dialRaw(t, n))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a silent client held the handshake for %v", d)
	}
	eventually(t, 5*time.Second, "the log lines", func() bool { return n.logs.has("handshake from an unnamed peer") })
	stillWorks(t, n, good)
}

func TestBadInputAfterHandshake(t *testing.T) {
	n, good := badInputNodes(t, dist.Config{MaxMessage: 1 << 20})
	to, _ := n.sys.Whereis("echo")
	termEnc = n.Encoder()
	cases := []struct {
		what, log string
		frames    []byte
	}{
		{"huge length prefix, an exit", "frame of 4294967295 bytes (MaxMessage 1048576) whose control message is not a send",
			oversizedHead(0xffffffff, term(t, etf.Tuple{opPayloadExit2, to, to}))},
		{"length past MaxMessage, garbage", "frame of 1048577 bytes", oversizedHead(1<<20+1, nil)},
		{"unknown control message", "unknown control message 99",
			frame([]byte{112}, term(t, etf.Tuple{99, actor.Atom("x")}))},
		{"malformed term", "control message: etf: malformed term",
			frame([]byte{112, 131, 104, 3, 97, 2, 255})},
		{"control message not a tuple", "is not a tuple", frame([]byte{112}, term(t, actor.Atom("hello")))},
		{"SEND without its message", "without its message",
			frame([]byte{112}, term(t, etf.Tuple{2, actor.Atom(""), to}))},
		{"SEND to a non-pid", "not a pid",
			frame([]byte{112}, term(t, etf.Tuple{2, actor.Atom(""), 42}), term(t, 1))},
		{"bytes after the message", "bytes after the message",
			frame([]byte{112}, term(t, etf.Tuple{2, actor.Atom(""), to}), term(t, 1), []byte{1, 2})},
		{"unknown frame kind", "frame of kind", frame([]byte{131, 99})},
		{"truncated header", "truncated atom cache", frame([]byte{131, 68, 3})},
		{"fragment of no sequence", "unknown sequence", frame([]byte{131, 70}, make([]byte, 16))},
		{"fragments past MaxMessage", "past MaxMessage", fragmentsPast(1 << 20)},
		{"compressed bomb", "too large", frame([]byte{112, 131, 80, 0x7f, 0xff, 0xff, 0xff, 0x78, 0x9c})},
	}
	for _, tc := range cases {
		c := handshaken(t, n)
		c.Write(tc.frames)
		closedByNode(t, c)
		eventually(t, 5*time.Second, tc.what+": log line "+tc.log, func() bool { return n.logs.has(tc.log) })
	}
	stillWorks(t, n, good)
}

const opPayloadExit2 = 26

// oversizedHead is the length prefix of a frame of size bytes, and its
// first 128 KiB: a pass-through frame with the control message ctl, or
// zeros.
func oversizedHead(size uint32, ctl []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, size)
	if ctl != nil {
		b = append(append(b, 112), ctl...)
	}
	return append(b, make([]byte, 128<<10+4-len(b))...)
}

// A send past MaxMessage is refused and counted, and the connection it
// came on keeps working: a frame (skipped as it arrives) and a fragmented
// message (its fragments dropped). An exit past it closes the connection
// (above, TestBadInputAfterHandshake).
func TestOversizedSendRefused(t *testing.T) {
	const max = 1 << 20
	n, good := badInputNodes(t, dist.Config{MaxMessage: max})
	_, inbox := spawnCollector(t, n.sys, 4, actor.Name("sink"))
	termEnc = n.Encoder()
	regSend := func(msg any) []byte {
		return frame([]byte{112}, term(t, etf.Tuple{6, actor.Atom(""), actor.Atom(""), actor.Atom("sink")}), term(t, msg))
	}
	c := handshaken(t, n)
	big := string(make([]byte, max+10))
	if _, err := c.Write(regSend(big)); err != nil {
		t.Fatal(err)
	}
	c.Write(regSend("after the frame"))
	if v := recv(t, inbox, 10*time.Second); v != "after the frame" {
		t.Fatalf("after the refused frame: %.40q", v)
	}
	if got := n.Stats().Oversized; got != 1 {
		t.Fatalf("Oversized %d after a frame past MaxMessage, want 1", got)
	}
	eventually(t, 5*time.Second, "the log line", func() bool {
		return n.logs.has("refused: past MaxMessage (1048576 bytes); 1 refused since")
	})
	// The same message as fragments of 64 KiB: dropped once past the bound.
	body := append(term(t, etf.Tuple{6, actor.Atom(""), actor.Atom(""), actor.Atom("sink")})[1:], term(t, big)[1:]...)
	rawFragments(77, body, fragmentSize, func(h, chunk []byte) { c.Write(frame(h, chunk)) })
	c.Write(regSend("after the fragments"))
	if v := recv(t, inbox, 10*time.Second); v != "after the fragments" {
		t.Fatalf("after the refused fragments: %.40q", v)
	}
	if got := n.Stats().Oversized; got != 2 {
		t.Fatalf("Oversized %d after fragments past MaxMessage, want 2", got)
	}
	if len(n.Nodes()) != 2 {
		t.Fatalf("connections %v: the attacker's was closed", n.Nodes())
	}
	stillWorks(t, n, good)
}

const fragmentSize = 64 << 10

// fragmentsPast is the start of a fragmented message that claims more
// fragments than MaxMessage holds: 20 fragments of 64 KiB.
func fragmentsPast(max int) []byte {
	var b []byte
	chunk := make([]byte, 64<<10)
	const k = 20
	for id := uint64(k); id >= 1; id-- {
		h := []byte{131, 70}
		if id == k {
			h = []byte{131, 69}
		}
		h = binary.BigEndian.AppendUint64(h, 1)
		h = binary.BigEndian.AppendUint64(h, id)
		if id == k {
			h = append(h, 0)
		}
		b = append(b, frame(h, chunk)...)
		if len(b) > 2*max {
			break
		}
	}
	return b
}

// A peer that completed the handshake and then sends nothing, not even
// ticks, is dropped by the ticks.
func TestSilentPeerTickTimeout(t *testing.T) {
	const tick = 400 * time.Millisecond
	n, good := badInputNodes(t, dist.Config{TickTime: tick})
	c := handshaken(t, n)
	start := time.Now()
	closedByNode(t, c) // reads our ticks, writes nothing
	d := time.Since(start)
	if d < tick || d > 3*tick {
		t.Errorf("silent peer dropped after %v (TickTime %v)", d, tick)
	}
	eventually(t, 5*time.Second, "the log line", func() bool { return n.logs.has("not responding") })
	stillWorks(t, n, good)
}

// rawFragments cuts body, a fragmented message's control message and
// payload (without their version bytes), into fragments of size bytes at
// most, as OTP sends them with sequence seq: the first an 'E' frame with an
// empty atom cache, the rest 'F' frames, counting down to 1. Each goes to
// write as its header and its part of body.
func rawFragments(seq uint64, body []byte, size int, write func(h, chunk []byte)) {
	for i, id := 0, uint64(len(body)+size-1)/uint64(size); id >= 1; i, id = i+1, id-1 {
		h := []byte{131, 70}
		if i == 0 {
			h = []byte{131, 69}
		}
		h = binary.BigEndian.AppendUint64(h, seq)
		h = binary.BigEndian.AppendUint64(h, id)
		if i == 0 {
			h = append(h, 0)
		}
		write(h, body[i*size:min(len(body), (i+1)*size)])
	}
}
