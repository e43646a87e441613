package handshake

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var offered = Mandatory | Mandatory25Digest | Published | DistMonitor | Fragments | Alias

func cfg(name, cookie string) *Config {
	return &Config{Name: name, Creation: 0x1234, Cookie: cookie, Flags: offered}
}

type result struct {
	p   Peer
	err error
}

// pair runs Dial from a to b and Accept on b over a pipe, each bounded by a
// deadline, and returns both results.
func pair(t *testing.T, a, b *Config, decide func(Peer) Status) (dial, acc result) {
	t.Helper()
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	dl := time.Now().Add(5 * time.Second)
	c1.SetDeadline(dl)
	c2.SetDeadline(dl)
	done := make(chan result, 1)
	go func() {
		p, err := Accept(c2, b, decide)
		c2.Close() // unblock a Dial still reading after a refusal
		done <- result{p, err}
	}()
	p, err := Dial(c1, a, b.Name, nil)
	c1.Close()
	return result{p, err}, <-done
}

func ok(Peer) Status { return StatusOK }

func TestDialAccept(t *testing.T) {
	a, b := cfg("a@127.0.0.1", "c"), cfg("b@127.0.0.1", "c")
	b.Creation = 99
	var seen Peer
	d, acc := pair(t, a, b, func(p Peer) Status { seen = p; return StatusOK })
	if d.err != nil || acc.err != nil {
		t.Fatalf("dial %v, accept %v", d.err, acc.err)
	}
	if d.p.Name != "b@127.0.0.1" || d.p.Creation != 99 || d.p.Flags != offered|Mandatory25 {
		t.Errorf("dial learned %+v", d.p)
	}
	if acc.p.Name != "a@127.0.0.1" || acc.p.Creation != 0x1234 || acc.p.Version != 6 || acc.p.Replaces {
		t.Errorf("accept learned %+v", acc.p)
	}
	if seen.Name != "a@127.0.0.1" {
		t.Errorf("decide saw %+v", seen)
	}
}

func TestWrongCookieRefusedBothWays(t *testing.T) {
	// A's digest is checked by B first: B refuses and closes, A sees the
	// close. Then B's digest checked by A: a B that answers with the wrong
	// cookie is refused by A.
	d, acc := pair(t, cfg("a@127.0.0.1", "right"), cfg("b@127.0.0.1", "wrong"), ok)
	if !errors.Is(acc.err, ErrCookie) {
		t.Errorf("accept: %v, want ErrCookie", acc.err)
	}
	if d.err == nil {
		t.Errorf("dial succeeded against a wrong cookie")
	}
	// A B that skips its own check and acks with its own (wrong) cookie.
	c1, c2 := net.Pipe()
	defer c1.Close()
	go func() {
		defer c2.Close()
		var buf [MaxMessage]byte
		readMsg(c2, &buf)
		writeMsg(c2, []byte("sok"))
		ch := binary.BigEndian.AppendUint64([]byte{'N'}, uint64(offered))
		ch = binary.BigEndian.AppendUint32(ch, 7)
		ch = binary.BigEndian.AppendUint32(ch, 1)
		ch = binary.BigEndian.AppendUint16(ch, 11)
		writeMsg(c2, append(ch, "b@127.0.0.1"...))
		b, _ := readMsg(c2, &buf)
		dg := Digest(binary.BigEndian.Uint32(b[1:]), "wrong")
		writeMsg(c2, append([]byte{'a'}, dg[:]...))
	}()
	c1.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := Dial(c1, cfg("a@127.0.0.1", "right"), "b@127.0.0.1", nil); !errors.Is(err, ErrCookie) {
		t.Errorf("dial: %v, want ErrCookie", err)
	}
}

func TestStatuses(t *testing.T) {
	for _, st := range []Status{StatusNok, StatusNotAllowed} {
		d, acc := pair(t, cfg("a@127.0.0.1", "c"), cfg("b@127.0.0.1", "c"), func(Peer) Status { return st })
		var re *RefusedError
		if !errors.As(d.err, &re) || re.Status != st {
			t.Errorf("%s: dial %v", st, d.err)
		}
		if !errors.Is(acc.err, ErrRefused) {
			t.Errorf("%s: accept %v", st, acc.err)
		}
	}
	d, acc := pair(t, cfg("a@127.0.0.1", "c"), cfg("b@127.0.0.1", "c"), func(Peer) Status { return StatusOKSimultaneous })
	if d.err != nil || acc.err != nil {
		t.Errorf("ok_simultaneous: dial %v, accept %v", d.err, acc.err)
	}
	d, acc = pair(t, cfg("a@127.0.0.1", "c"), cfg("b@127.0.0.1", "c"), func(Peer) Status { return StatusAlive })
	if d.err != nil || acc.err != nil || !acc.p.Replaces {
		t.Errorf("alive: dial %v, accept %v %+v", d.err, acc.err, acc.p)
	}
}

func TestMissingFlagsRefused(t *testing.T) {
	a := cfg("a@127.0.0.1", "c")
	a.Flags = Mandatory25 // no UNLINK_ID, no V4_NC: an OTP 26 node refuses it
	called := false
	d, acc := pair(t, a, cfg("b@127.0.0.1", "c"), func(Peer) Status { called = true; return StatusOK })
	if !errors.Is(acc.err, ErrFlags) || called {
		t.Errorf("accept: %v (decide called %v)", acc.err, called)
	}
	var re *RefusedError
	if !errors.As(d.err, &re) || re.Status != StatusNotAllowed {
		t.Errorf("dial: %v", d.err)
	}
	// The digest flag stands for the OTP 25 flags.
	a.Flags = Mandatory25Digest | Mandatory26
	if d, acc := pair(t, a, cfg("b@127.0.0.1", "c"), ok); d.err != nil || acc.err != nil {
		t.Errorf("digest flag: dial %v, accept %v", d.err, acc.err)
	}
}

// A peer that sends the version 5 name and then the complement (as OTP 23
// and 24 did toward a node of unknown version).
func TestVersion5NameWithComplement(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c1.Close()
	dl := time.Now().Add(5 * time.Second)
	c1.SetDeadline(dl)
	c2.SetDeadline(dl)
	done := make(chan result, 1)
	go func() {
		p, err := Accept(c2, cfg("b@127.0.0.1", "c"), ok)
		c2.Close()
		done <- result{p, err}
	}()
	var buf [MaxMessage]byte
	name := binary.BigEndian.AppendUint16([]byte{'n'}, 5)
	name = binary.BigEndian.AppendUint32(name, uint32(offered))
	writeMsg(c1, append(name, "a@127.0.0.1"...))
	if b, err := readMsg(c1, &buf); err != nil || string(b) != "sok" {
		t.Fatalf("status %q %v", b, err)
	}
	b, err := readMsg(c1, &buf)
	if err != nil {
		t.Fatal(err)
	}
	_, challenge, err := ParseChallenge(b)
	if err != nil {
		t.Fatal(err)
	}
	comp := binary.BigEndian.AppendUint32([]byte{'c'}, uint32(offered>>32))
	writeMsg(c1, binary.BigEndian.AppendUint32(comp, 4242))
	dg := Digest(challenge, "c")
	writeMsg(c1, append(binary.BigEndian.AppendUint32([]byte{'r'}, 5), dg[:]...))
	if b, err = readMsg(c1, &buf); err != nil || b[0] != 'a' {
		t.Fatalf("ack %q %v", b, err)
	}
	r := <-done
	if r.err != nil || r.p.Version != 5 || r.p.Creation != 4242 || r.p.Flags&V4NC == 0 {
		t.Errorf("accept: %+v %v", r.p, r.err)
	}
}

func TestDigestMatchesOTP(t *testing.T) {
	// erlang:md5("cookie" ++ integer_to_list(1234567890)) in OTP 25.
	got := Digest(1234567890, "cookie")
	want := []byte{250, 118, 157, 164, 54, 77, 71, 44, 22, 56, 223, 183, 150, 228, 171, 96}
	if !bytes.Equal(got[:], want) {
		t.Errorf("digest % x", got)
	}
}

func TestBadInput(t *testing.T) {
	cases := map[string][]byte{
		"empty":           nil,
		"zero length":     {0, 0},
		"huge length":     {0xff, 0xff, 'N'},
		"truncated":       {0, 20, 'N', 0, 0},
		"unknown tag":     {0, 3, 'x', 1, 2},
		"name length lie": append([]byte{0, 17, 'N', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 200}, "a@"...),
		"no at":           nameMsg(offered, "nohost"),
		"bad utf8":        nameMsg(offered, "a\xff@h"),
	}
	for what, in := range cases {
		_, err := Accept(&script{in: bytes.NewReader(in)}, cfg("b@127.0.0.1", "c"), ok)
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want ErrProtocol", what, err)
		}
	}
}

func nameMsg(f Flags, name string) []byte {
	b := binary.BigEndian.AppendUint64([]byte{'N'}, uint64(f))
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint16(b, uint16(len(name)))
	b = append(b, name...)
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(b))), b...)
}

// script is a connection whose peer says what in holds and hears nothing.
type script struct{ in io.Reader }

func (s *script) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s *script) Write(p []byte) (int, error) { return len(p), nil }

// FuzzHandshakeAccept feeds arbitrary bytes as the initiator's side of a
// handshake: Accept must return (an error, or a peer whose name passed
// CheckName), never panic; its reads are bounded by MaxMessage each.
func FuzzHandshakeAccept(f *testing.F) {
	f.Add(nameMsg(offered, "a@127.0.0.1"))
	f.Add(append(nameMsg(offered, "a@127.0.0.1"), 0, 21, 'r', 0, 0, 0, 1))
	v5 := binary.BigEndian.AppendUint16([]byte{'n'}, 5)
	v5 = append(binary.BigEndian.AppendUint32(v5, uint32(offered)), "a@h"...)
	f.Add(append([]byte{0, byte(len(v5))}, v5...))
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		c := cfg("b@127.0.0.1", "c")
		c.Rand = bytes.NewReader(make([]byte, 64)) // challenge 0: a fixed digest to find
		statuses := []Status{StatusOK, StatusAlive, StatusOKSimultaneous, StatusNok}
		st := statuses[len(in)%len(statuses)]
		p, err := Accept(&script{in: bytes.NewReader(in)}, c, func(Peer) Status { return st })
		if err == nil {
			if CheckName(p.Name) != nil || missing(p.Flags, Mandatory) != nil {
				t.Fatalf("accepted %+v", p)
			}
		}
	})
}

// FuzzHandshakeDial feeds arbitrary bytes as the acceptor's side.
func FuzzHandshakeDial(f *testing.F) {
	ch := binary.BigEndian.AppendUint64([]byte{'N'}, uint64(offered))
	ch = binary.BigEndian.AppendUint32(ch, 0)
	ch = binary.BigEndian.AppendUint32(ch, 1)
	ch = append(binary.BigEndian.AppendUint16(ch, 11), "b@127.0.0.1"...)
	seed := append([]byte{0, 3, 's', 'o', 'k', 0, byte(len(ch))}, ch...)
	f.Add(seed)
	f.Add(append([]byte{0, 6, 's', 'a', 'l', 'i', 'v', 'e'}, seed[5:]...))
	f.Add([]byte{0, 3, 's', 'n', 'o'})
	f.Fuzz(func(t *testing.T, in []byte) {
		c := cfg("a@127.0.0.1", "c")
		c.Rand = bytes.NewReader(make([]byte, 64))
		p, err := Dial(&script{in: bytes.NewReader(in)}, c, "b@127.0.0.1", func() bool { return len(in)%2 == 0 })
		if err == nil && (p.Name != "b@127.0.0.1" || missing(p.Flags, Mandatory) != nil) {
			t.Fatalf("dialled %+v", p)
		}
	})
}
