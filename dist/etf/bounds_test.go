package etf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// TestMemoryPerByte: decoding allocates in proportion to the input, for
// the terms that cost the most Go memory per wire byte (the bound the
// package doc states: about 32 bytes a byte).
func TestMemoryPerByte(t *testing.T) {
	const n = 1 << 16
	list := func(elem []byte) []byte {
		b := binary.BigEndian.AppendUint32([]byte{108}, n)
		return append(append(b, bytes.Repeat(elem, n)...), 106)
	}
	mapOf := func(pair func(i int) []byte) []byte {
		b := binary.BigEndian.AppendUint32([]byte{116}, n)
		for i := range n {
			b = append(b, pair(i)...)
		}
		return b
	}
	for _, tt := range []struct {
		name string
		in   []byte
	}{
		{"tuple of []", append(binary.BigEndian.AppendUint32([]byte{105}, n), bytes.Repeat([]byte{106}, n)...)},
		{"list of {[]}", list([]byte{104, 1, 106})},
		{"list of [[]]", list([]byte{108, 0, 0, 0, 1, 106, 106})},
		{"list of #{}", list([]byte{116, 0, 0, 0, 0})},
		{"list of 256", list([]byte{98, 0, 0, 1, 0})},
		{"list of floats", list([]byte{70, 0, 0, 0, 0, 0, 0, 0, 1})},
		{"list of bit binaries", list([]byte{77, 0, 0, 0, 1, 1, 0x80})},
		{"list of refs", list([]byte{90, 0, 1, 119, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 1})},
		{"string", append(binary.BigEndian.AppendUint16([]byte{107}, 0xffff), bytes.Repeat([]byte{1}, 0xffff)...)},
		{"map of int keys", mapOf(func(i int) []byte { return []byte{98, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 106} })},
		{"map of [] keys", mapOf(func(i int) []byte { return []byte{106, 106} })},
	} {
		var d etf.Decoder
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, _, err := d.Decode(tt.in); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		runtime.ReadMemStats(&after)
		per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(tt.in))
		t.Logf("%s: %.1f bytes allocated per input byte", tt.name, per)
		if per > 32 {
			t.Errorf("%s: %.1f bytes allocated per input byte, past the stated 32", tt.name, per)
		}
	}
}

// TestSmallMapEncodeAllocs: sorting a small map's keys allocates nothing.
func TestSmallMapEncodeAllocs(t *testing.T) {
	m := map[any]any{actor.Atom("b"): 2, actor.Atom("a"): 1, 3: 4, "k": 2.5}
	var e etf.Encoder
	buf := make([]byte, 0, 256)
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop states at random")
	}
	if n := testing.AllocsPerRun(100, func() { buf, _ = e.Append(buf[:0], m) }); n > 0 {
		t.Errorf("%v allocations per encode", n)
	}
}

// TestListTailChain: a list whose tail is a list, whose tail is a list, and
// so on (OTP never sends one; a peer may) decodes flat, in linear time and
// without counting against MaxDepth.
func TestListTailChain(t *testing.T) {
	const links = 100_000
	var b []byte
	for range links {
		b = append(b, 108, 0, 0, 0, 1, 97, 7)
	}
	b = append(b, 107, 0, 2, 1, 2) // the last tail: the string [1, 2]
	var d etf.Decoder
	v, n, err := d.Decode(b)
	if err != nil || n != len(b) {
		t.Fatalf("%d bytes used of %d: %v", n, len(b), err)
	}
	l, ok := v.([]any)
	if !ok || len(l) != links+2 || l[0] != 7 || l[links] != 1 || l[links+1] != 2 {
		t.Fatalf("decoded %T of %d elements", v, len(l))
	}
	b[len(b)-5] = 97 // the last tail: 0, and then a stray byte
	if v, _, err := d.Decode(b[:len(b)-3]); err != nil {
		t.Fatal(err)
	} else if il, ok := v.(etf.ImproperList); !ok || len(il.Elems) != links || il.Tail != 0 {
		t.Fatalf("decoded %T", v)
	}
}

// TestNestedClaimsReserved: nested lists that each claim as many elements
// as there are bytes left cannot each pre-allocate from the same bytes:
// the elements an open list still awaits are reserved, so the second
// claim is refused at once, and decoding allocates in proportion to the
// input (each list pre-allocating for the bytes left allocated the input
// times the depth).
func TestNestedClaimsReserved(t *testing.T) {
	const levels, pad = 200, 64 << 10
	total := 5*levels + pad
	var b []byte
	for i := range levels {
		b = binary.BigEndian.AppendUint32(append(b, 108), uint32(total-5*(i+1)-1))
	}
	b = append(b, make([]byte, pad)...)
	var d etf.Decoder
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err := d.Decode(b)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, etf.ErrMalformed) {
		t.Fatalf("nested claims: %v", err)
	}
	if per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(b)); per > 32 {
		t.Errorf("%.1f bytes allocated per input byte for nested claims", per)
	}
}

// TestDeepMemoryPerByte: a term that is all nesting costs its values and
// a stack of a 72-byte frame a level (doubled as it grows, freed when the
// term is complete): at most 128 bytes allocated per input byte for the
// densest shape, a tuple level of 2 bytes (the stated bound).
func TestDeepMemoryPerByte(t *testing.T) {
	const levels = 100_000
	for _, tt := range []struct {
		name string
		in   []byte
	}{
		{"tuples", append(bytes.Repeat([]byte{104, 1}, levels), 106)},
		{"lists", append(append(bytes.Repeat([]byte{108, 0, 0, 0, 1}, levels), 106), bytes.Repeat([]byte{106}, levels)...)},
		{"maps", append(bytes.Repeat([]byte{116, 0, 0, 0, 1, 97, 1}, levels), 106)},
	} {
		var d etf.Decoder
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, _, err := d.Decode(tt.in); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		runtime.ReadMemStats(&after)
		per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(tt.in))
		t.Logf("%s: %.1f bytes allocated per input byte", tt.name, per)
		if per > 128 {
			t.Errorf("%s: %.1f bytes allocated per input byte", tt.name, per)
		}
	}
}
