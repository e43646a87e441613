package dist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/handshake"
	"github.com/colonyrt/colony/internal/testsys"
)

// internalNode is a Node with a System and an identity, not started: enough
// for the encoder and the fast paths.
func internalNode(t testing.TB) *Node {
	sys := testsys.Start(t, actor.Config{})
	n := &Node{sys: sys, name: "a@127.0.0.1", cfg: config{Config: Config{MaxMessage: 64 << 20}}}
	n.etfNode = etf.Node{Name: n.name, Creation: 9, Sys: sys}
	n.enc = &etf.Encoder{Node: n.etfNode}
	var err error
	if n.kernel, err = sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {})); err != nil {
		t.Fatal(err)
	}
	return n
}

// A frame whose length claims 60 MiB but whose peer sends 10 bytes costs
// about readChunk (1 MiB), not 60 MiB: memory follows the bytes sent.
func TestFrameReaderAllocatesAsBytesArrive(t *testing.T) {
	in := binary.BigEndian.AppendUint32(nil, 60<<20)
	in = append(in, make([]byte, 10)...)
	fr := frameReader{r: bytes.NewReader(in), max: 64 << 20}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, _, err := fr.next()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*readChunk {
		t.Errorf("allocated %d bytes for a frame that sent 10", got)
	}
	// Past the bound: its first bytes are read, and the rest left to skip.
	in = append(binary.BigEndian.AppendUint32(nil, 65<<20), make([]byte, 100)...)
	fr = frameReader{r: bytes.NewReader(in), max: 64 << 20}
	if b, _, over, err := fr.next(); !errors.Is(err, io.ErrUnexpectedEOF) || b != nil || over != 0 {
		t.Errorf("frame past max, truncated: %d bytes, over %d, %v", len(b), over, err)
	}
	in = append(binary.BigEndian.AppendUint32(nil, 65<<20), make([]byte, 65<<20)...)
	in = append(in, 0, 0, 0, 1, 'x')
	fr = frameReader{r: bytes.NewReader(in), max: 64 << 20}
	b, owned, over, err := fr.next()
	if err != nil || len(b) != smallFrame || owned || over != 65<<20-smallFrame {
		t.Fatalf("frame past max: %d bytes, owned %v, over %d, %v", len(b), owned, over, err)
	}
	if err := fr.skip(over); err != nil {
		t.Fatal(err)
	}
	if b, _, _, err := fr.next(); err != nil || string(b) != "x" {
		t.Fatalf("the frame after the skipped one: %q %v", b, err)
	}
}

func TestFrameReaderLargeFrame(t *testing.T) {
	body := bytes.Repeat([]byte{7}, 3*readChunk+5)
	in := append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	in = append(in, 0, 0, 0, 0) // a tick after it
	fr := frameReader{r: bytes.NewReader(in), max: 64 << 20}
	b, owned, _, err := fr.next()
	if err != nil || !bytes.Equal(b, body) || !owned {
		t.Fatalf("large frame: %d bytes, owned %v, %v", len(b), owned, err)
	}
	if b, _, _, err := fr.next(); err != nil || len(b) != 0 {
		t.Fatalf("tick: %v %v", b, err)
	}
}

// The atom cache header as OTP writes it (the bytes of a REG_SEND from OTP
// 25, captured): four new entries, one of them the atom ”.
func TestAtomCacheHeaderFromOTP(t *testing.T) {
	hdr := []byte{0x04, 0x8f, 0xdc, 0x00, 0x99, 0x03}
	hdr = append(hdr, "a@b"...)
	hdr = append(hdr, 0x05, 0x00, 0x76, 0x03)
	hdr = append(hdr, "rex"...)
	hdr = append(hdr, 0x5f, 0x10)
	hdr = append(hdr, "features_request"...)
	hdr = append(hdr, 0x68) // the first byte of the control message
	var a atomRefs
	rest, err := a.header(hdr)
	if err != nil {
		t.Fatal(err)
	}
	want := []actor.Atom{"a@b", "", "rex", "features_request"}
	if a.nrefs != 4 || !equalAtoms(a.refs[:4], want) || len(rest) != 1 || rest[0] != 0x68 {
		t.Fatalf("refs %q rest % x", a.refs[:a.nrefs], rest)
	}
	// Segments: ref 0 is segment 7 index 0x99, ref 1 segment 0 index 5.
	if a.cache[7<<8|0x99] != "a@b" || !a.set[5] || a.cache[4<<8|0x76] != "rex" || a.cache[5<<8|0x5f] != "features_request" {
		t.Errorf("cache entries not where the segments say")
	}
	// A later header refers to them without their text (old entries), in
	// another order, with long atoms on.
	hdr2 := []byte{0x03, 0x45, 0x10, 0x5f, 0x76, 0x05}
	if _, err := a.header(hdr2); err != nil {
		t.Fatal(err)
	}
	if !equalAtoms(a.refs[:3], []actor.Atom{"features_request", "rex", ""}) {
		t.Errorf("old refs %q", a.refs[:3])
	}
	// A reference to an entry never set is refused.
	if _, err := a.header([]byte{0x01, 0x01, 0x42}); !errors.Is(err, ErrProtocol) {
		t.Errorf("unset entry: %v", err)
	}
	// Long atoms: a 2-byte length.
	long := append([]byte{0x01, 0x18, 0x07, 0x00, 0x02}, "ok"...)
	if _, err := a.header(long); err != nil || a.refs[0] != "ok" {
		t.Errorf("long atom: %q %v", a.refs[0], err)
	}
}

func equalAtoms(a, b []actor.Atom) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Frames this node writes, read back by its reader: the fragments of a
// large message reassemble to the same terms.
func TestFragmentsRoundTrip(t *testing.T) {
	var seq uint64
	n := internalNode(t)
	e := encoder{node: n, flags: handshake.Mandatory | handshake.Fragments | handshake.SendSender,
		seq: func() uint64 { seq++; return seq }}
	to, _ := actor.RemotePid(actor.RemoteID{Node: "b@h", Creation: 1, ID: 5, Serial: 0})
	big := string(bytes.Repeat([]byte("xyz"), 100000))
	frames, _, err := e.frames(control{op: opSendSender, from: n.kernel, to: to}, big, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != (300000+fragmentSize)/fragmentSize+0 && len(frames) < 4 {
		t.Fatalf("%d frames", len(frames))
	}
	var in []byte
	for _, f := range frames {
		in = append(in, f...)
	}
	fr := frameReader{r: bytes.NewReader(in), max: 64 << 20}
	fs := fragments{max: 64 << 20}
	var a atomRefs
	var whole *partial
	for range frames {
		b, _, _, err := fr.next()
		if err != nil {
			t.Fatal(err)
		}
		seqID, id := be64(b[2:]), be64(b[10:])
		switch b[1] {
		case fragHeader:
			rest, herr := a.header(b[18:])
			if herr != nil {
				t.Fatal(herr)
			}
			whole, err = fs.start(seqID, id, nil, rest)
		case fragCont:
			whole, err = fs.cont(seqID, id, b[18:])
		default:
			t.Fatalf("frame kind %d", b[1])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if whole == nil || fs.total != 0 || len(fs.open) != 0 {
		t.Fatalf("not reassembled: %v total %d open %d", whole != nil, fs.total, len(fs.open))
	}
	d := etf.Decoder{}
	ctl, k, err := d.Decode(whole.asm.bytes())
	if err != nil {
		t.Fatal(err)
	}
	msg, _, err := d.Decode(whole.asm.bytes()[k:])
	if err != nil || msg != big || ctl.(etf.Tuple)[0] != opSendSender {
		t.Fatalf("ctl %v msg %d bytes err %v", ctl, len(msg.(string)), err)
	}
}

func TestFragmentBounds(t *testing.T) {
	fs := fragments{max: 100}
	if _, err := fs.start(1, 3, nil, make([]byte, 60)); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.cont(1, 1, make([]byte, 10)); !errors.Is(err, ErrProtocol) {
		t.Errorf("out of order: %v", err)
	}
	if _, err := fs.cont(1, 2, make([]byte, 50)); !errors.Is(err, ErrProtocol) {
		t.Errorf("past max, no canDrop: %v", err)
	}
	if _, err := fs.start(1, 2, nil, nil); !errors.Is(err, ErrProtocol) {
		t.Errorf("sequence started twice: %v", err)
	}
	if _, err := fs.start(2, 0, nil, nil); !errors.Is(err, ErrProtocol) {
		t.Errorf("fragment id 0: %v", err)
	}
	fs = fragments{max: 1 << 20}
	for i := range maxSequences {
		if _, err := fs.start(uint64(i), 2, nil, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fs.start(999, 2, nil, []byte{1}); !errors.Is(err, ErrProtocol) {
		t.Errorf("sequence past maxSequences: %v", err)
	}
}

// FuzzFrameHeader feeds arbitrary bytes to the atom cache header parser and
// the fragment reassembler: errors, never a panic, and the open sequences
// stay within their bound.
func FuzzFrameHeader(f *testing.F) {
	f.Add([]byte{0x04, 0x8f, 0xdc, 0x00, 0x99, 0x01, 'a', 0x05, 0x00, 0x76, 0x01, 'r', 0x5f, 0x01, 'f'})
	f.Add([]byte{0x01, 0x18, 0x07, 0x00, 0x02, 'o', 'k'})
	f.Add([]byte{0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		var a atomRefs
		rest, err := a.header(in)
		if err == nil && len(rest) > len(in) {
			t.Fatal("rest longer than input")
		}
		fs := fragments{max: 1 << 10, canDrop: func(_ []actor.Atom, first []byte) bool { return len(first) > 0 && first[0]&1 == 0 }}
		for len(in) >= 9 {
			seq, id := uint64(in[0]%4), uint64(in[1]%5)
			n := int(in[2]) * 4
			if n > len(in)-3 {
				n = len(in) - 3
			}
			var p *partial
			if in[3]&1 == 0 {
				p, _ = fs.start(seq, id, nil, in[3:3+n])
			} else {
				p, _ = fs.cont(seq, id, in[3:3+n])
			}
			if p != nil && !p.dropped && len(p.asm.bytes()) != p.size {
				t.Fatalf("reassembled %d bytes of %d received", len(p.asm.bytes()), p.size)
			}
			if fs.total > fs.max || len(fs.open) > maxSequences {
				t.Fatalf("bounds: total %d open %d", fs.total, len(fs.open))
			}
			in = in[3+n:]
		}
	})
}

// A fragmented message that passes max is dropped when canDrop allows it:
// its later fragments are taken and not kept, its last one returns it
// marked dropped, and the bytes held go back to zero; without canDrop's
// leave, it is a protocol error.
func TestFragmentDroppedPastMax(t *testing.T) {
	var asked [][]byte
	allow := true
	fs := fragments{max: 100, canDrop: func(_ []actor.Atom, first []byte) bool {
		asked = append(asked, first)
		return allow
	}}
	first := append([]byte{'c'}, make([]byte, 59)...)
	if _, err := fs.start(1, 3, nil, first); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.start(2, 2, nil, make([]byte, 30)); err != nil {
		t.Fatal(err)
	}
	if p, err := fs.cont(1, 2, make([]byte, 50)); err != nil || p != nil {
		t.Fatalf("past max: %v %v", p, err)
	}
	if len(asked) != 1 || len(asked[0]) == 0 || asked[0][0] != 'c' {
		t.Fatalf("canDrop asked with %q", asked)
	}
	if fs.total != 30 {
		t.Fatalf("total %d after the drop, want 30", fs.total)
	}
	p, err := fs.cont(1, 1, make([]byte, 50))
	if err != nil || p == nil || !p.dropped || p.size != 160 {
		t.Fatalf("last fragment of the dropped message: %+v %v", p, err)
	}
	p, err = fs.cont(2, 1, []byte{1, 2})
	if err != nil || p == nil || p.dropped || len(p.asm.bytes()) != 32 || fs.total != 0 {
		t.Fatalf("the other message: %+v %v, total %d", p, err, fs.total)
	}
	// A first fragment past max (others hold the bytes): asked at once.
	if _, err := fs.start(3, 2, nil, make([]byte, 90)); err != nil {
		t.Fatal(err)
	}
	allow = false
	if _, err := fs.start(4, 2, nil, make([]byte, 20)); !errors.Is(err, ErrProtocol) {
		t.Fatalf("past max, not droppable: %v", err)
	}
}

// The assembly of a large message allocates its size once, plus the
// chunks of its first quarter: about 1.25 times the message, where a
// buffer grown by doubling allocated 3 times and more.
func TestAssemblyAllocation(t *testing.T) {
	const size = 40 << 20
	piece := make([]byte, fragmentSize)
	for _, hint := range []int{size, size + size/64} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a := assembly{hint: hint}
		for a.n < size {
			a.write(piece)
		}
		b := a.bytes()
		runtime.ReadMemStats(&after)
		if len(b) != size {
			t.Fatalf("%d bytes", len(b))
		}
		got := float64(after.TotalAlloc-before.TotalAlloc) / size
		t.Logf("hint %d: %.2f bytes allocated per byte", hint, got)
		if got > 1.35 {
			t.Errorf("hint %d: %.2f bytes allocated per byte, want at most 1.35", hint, got)
		}
	}
}

// FuzzFrameReader reads any byte stream as frames with a small max,
// skipping the frames past it: never a panic, each frame returned whole
// (its length as announced) or cut at max with the rest skipped.
func FuzzFrameReader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 0, 0, 0, 1, 0}, uint16(100))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1}, uint16(10))
	f.Fuzz(func(t *testing.T, in []byte, max uint16) {
		fr := frameReader{r: bytes.NewReader(in), max: int(max) + 1}
		for {
			b, _, over, err := fr.next()
			if err != nil {
				return
			}
			if len(b) > smallFrame && len(b) > fr.max || over > 0 && len(b)+over <= fr.max {
				t.Fatalf("frame of %d bytes, %d over, max %d", len(b), over, fr.max)
			}
			if over > 0 && fr.skip(over) != nil {
				return
			}
		}
	})
}

// reassemble reads frames as the reader does and returns the message's
// terms (the control message and what follows it, nil if nothing), and
// the control message as decoded from the first frame alone, as OTP
// decodes it (erts' dist.c: the control message of a fragmented message is
// read from its starting fragment; only the payload is joined).
func reassemble(t *testing.T, frames [][]byte) (first, ctl, msg any) {
	t.Helper()
	var in []byte
	for _, f := range frames {
		in = append(in, f...)
	}
	fr := frameReader{r: bytes.NewReader(in), max: 64 << 20}
	fs := fragments{max: 64 << 20}
	var a atomRefs
	d := etf.Decoder{}
	var whole []byte
	for i := range frames {
		b, _, _, err := fr.next()
		if err != nil {
			t.Fatal(err)
		}
		var data []byte
		switch b[1] {
		case distHeader:
			if len(frames) != 1 {
				t.Fatalf("a 'D' frame among %d", len(frames))
			}
			if data, err = a.header(b[2:]); err != nil {
				t.Fatal(err)
			}
			whole = data
		case fragHeader:
			if i != 0 {
				t.Fatalf("'E' frame at %d", i)
			}
			if data, err = a.header(b[18:]); err != nil {
				t.Fatal(err)
			}
			p, err := fs.start(be64(b[2:]), be64(b[10:]), nil, data)
			if err != nil {
				t.Fatal(err)
			}
			if p != nil {
				whole = p.asm.bytes()
			}
		case fragCont:
			if i == 0 {
				t.Fatal("'F' frame first")
			}
			data = b[18:]
			p, err := fs.cont(be64(b[2:]), be64(b[10:]), data)
			if err != nil {
				t.Fatal(err)
			}
			if p != nil {
				whole = p.asm.bytes()
			}
		default:
			t.Fatalf("frame kind %d", b[1])
		}
		if i == 0 {
			if first, _, err = d.Decode(data); err != nil {
				t.Fatalf("the control message is not whole in the first frame: %v", err)
			}
		}
	}
	if whole == nil {
		t.Fatal("not reassembled")
	}
	ctl, k, err := d.Decode(whole)
	if err != nil {
		t.Fatal(err)
	}
	if k < len(whole) {
		if msg, _, err = d.Decode(whole[k:]); err != nil {
			t.Fatal(err)
		}
	}
	return first, ctl, msg
}

// A control message larger than a fragment (an exit signal with a large
// reason, a spawn request with a large option list) is whole in the first
// frame; only what follows it is split, into fragments of fragmentSize at
// most. With EXIT_PAYLOAD the reason follows the control message (the
// PAYLOAD_ forms) and is fragmented; without it an exit signal with
// nothing after its control message is one frame.
func TestFragmentsKeepTheControlMessageWhole(t *testing.T) {
	var seq uint64
	n := internalNode(t)
	from := n.kernel
	to, _ := actor.RemotePid(actor.RemoteID{Node: "b@h", Creation: 1, ID: 5, Serial: 0})
	ref := etf.Ref{Node: "b@h", Creation: 1, Len: 3, Words: [5]uint32{1, 2, 3}}
	big := string(bytes.Repeat([]byte("why"), 70<<10/3))          // a 70 KB reason
	huge := string(bytes.Repeat([]byte("why"), 5<<20/3))          // a 5 MB one
	opts := []any{etf.Tuple{actor.Atom("opt"), big}, atomMonitor} // a large option list
	base := handshake.Mandatory | handshake.Fragments | handshake.SendSender
	for _, tc := range []struct {
		name   string
		flags  handshake.Flags
		ctl    etf.Tuple
		msg    any
		hasMsg bool
		// what arrives: the control message and the message
		wantOp int
		want   any
		frames int // 0: more than one
	}{
		{"EXIT", base, etf.Tuple{opExit, from, to, big}, nil, false, opExit, big, 1},
		{"EXIT2 5MB", base, etf.Tuple{opExit2, from, to, huge}, nil, false, opExit2, huge, 1},
		{"PAYLOAD_EXIT", base | handshake.ExitPayload, etf.Tuple{opExit, from, to, big}, nil, false, opPayloadExit, big, 0},
		{"PAYLOAD_EXIT2", base | handshake.ExitPayload, etf.Tuple{opExit2, from, to, huge}, nil, false, opPayloadExit2, huge, 0},
		{"PAYLOAD_MONITOR_P_EXIT", base | handshake.ExitPayload, etf.Tuple{opMonitorPExit, to, from, ref, huge}, nil, false, opPayloadMonitorExt, huge, 0},
		{"SPAWN_REQUEST", base, etf.Tuple{opSpawnRequest, ref, from, from, etf.Tuple{actor.Atom("m"), actor.Atom("f"), 1}, opts}, []any{huge}, true, opSpawnRequest, []any{huge}, 0},
		{"small EXIT", base | handshake.ExitPayload, etf.Tuple{opExit, from, to, actor.Atom("boom")}, nil, false, opPayloadExit, actor.Atom("boom"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := encoder{node: n, flags: tc.flags, seq: func() uint64 { seq++; return seq }}
			frames, _, err := e.frames(control{tuple: tc.ctl, signal: true}, tc.msg, tc.hasMsg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.frames != 0 && len(frames) != tc.frames || tc.frames == 0 && len(frames) < 2 {
				t.Fatalf("%d frames", len(frames))
			}
			first, ctl, msg := reassemble(t, frames)
			if first.(etf.Tuple)[0] != tc.wantOp || ctl.(etf.Tuple)[0] != tc.wantOp {
				t.Fatalf("op %v, want %d", ctl.(etf.Tuple)[0], tc.wantOp)
			}
			got := msg
			if _, payload := payloadOps[tc.ctl[0].(int)]; payload && msg == nil {
				got = ctl.(etf.Tuple)[len(ctl.(etf.Tuple))-1]
			}
			if !equalTerms(got, tc.want) {
				t.Errorf("the reason or message did not come back whole")
			}
			for i, f := range frames[1:] {
				if len(f)-22 > fragmentSize {
					t.Errorf("fragment %d: %d bytes", i+1, len(f)-22)
				}
			}
			// framesOf, for what was queued before the connection was up.
			var body []byte
			if tc.hasMsg {
				body, _ = n.enc.Append(nil, tc.msg)
			}
			frames2, _ := e.framesOf(control{tuple: tc.ctl, signal: true}, body, tc.hasMsg)
			if len(frames2) != len(frames) {
				t.Fatalf("framesOf: %d frames, frames: %d", len(frames2), len(frames))
			}
			for i := range frames {
				if i > 0 || tc.frames == 1 { // the 'E' frames differ in their sequence
					if !bytes.Equal(frames[i][22:], frames2[i][22:]) && !bytes.Equal(frames[i], frames2[i]) {
						t.Errorf("framesOf differs from frames at frame %d", i)
					}
				}
			}
		})
	}
}

func equalTerms(a, b any) bool {
	switch a := a.(type) {
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalTerms(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
