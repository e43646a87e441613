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

// FuzzDecode: no input makes the decoder panic or return an error that is
// not one of the four sentinels, and whatever decodes re-encodes and
// decodes again to an equal value.
func FuzzDecode(f *testing.F) {
	f.Add(otpTuple)
	f.Add(append([]byte{131}, testFun()...))
	f.Add(append([]byte{131}, testFun([]byte{97, 1}, []byte{106})...))
	f.Add([]byte{131, 80, 0, 0, 0, 12, 120, 156, 202, 97, 96, 96, 96, 42, 103, 76, 44, 103, 76, 204, 2, 4, 0, 0, 255, 255, 13, 99, 2, 139}) // [a, a]
	f.Add([]byte{131, 82, 7})
	f.Add([]byte{131, 103, 119, 1, 'a', 0, 0, 0, 7, 0, 0, 0, 1, 2})
	f.Add([]byte{131, 90, 0, 2, 119, 1, 'a', 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2})
	f.Add([]byte{131, 108, 0, 0, 0, 1, 97, 1, 108, 0, 0, 0, 1, 97, 2, 97, 3})
	f.Add([]byte{131, 116, 0, 0, 0, 2, 70, 0, 0, 0, 0, 0, 0, 0, 0, 97, 1, 70, 0x80, 0, 0, 0, 0, 0, 0, 0, 97, 2})
	f.Add([]byte{131, 104, 3, 119, 14, 'e', 't', 'f', '_', 't', 'e', 's', 't', '_', 'p', 'o', 'i', 'n', 't', 97, 1, 97, 2})
	f.Add([]byte{131, 77, 0, 0, 0, 1, 3, 0xff})
	f.Add([]byte{131, 111, 0, 0, 0, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{131, 99, '1', '.', '5', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{131, 120, 119, 1, 'a', 1, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 4})
	f.Add([]byte{131, 113, 119, 1, 'm', 119, 1, 'f', 97, 2})
	refs := make([]actor.Atom, 9)
	refs[7], refs[8] = "cached", "true"
	f.Add(append(append([]byte{131}, bytes.Repeat([]byte{108, 0, 0, 0, 1}, 50)...), bytes.Repeat([]byte{106}, 51)...))
	f.Add(append([]byte{131}, bytes.Repeat([]byte{104, 1}, 50)...))
	f.Add(append([]byte{131}, bytes.Repeat([]byte{116, 0, 0, 0, 1, 97, 1}, 50)...))
	d := etf.Decoder{AtomRefs: refs, MaxSize: 1 << 20}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeRoundTrip(t, &d, b)
	})
}

// decodeRoundTrip decodes b with d: an error must wrap a sentinel; a term
// must use at most b's bytes and come back equal through Marshal and
// Unmarshal. It returns the term and the bytes used (ok false on an error).
// Failures do not print the term: a fuzzed one may be millions deep.
func decodeRoundTrip(t *testing.T, d *etf.Decoder, b []byte) (v any, n int, ok bool) {
	t.Helper()
	v, n, err := d.DecodeVersioned(b)
	if err != nil {
		if !isSentinel(err) {
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		return nil, 0, false
	}
	if n < 2 || n > len(b) {
		t.Fatalf("used %d of %d bytes", n, len(b))
	}
	again, err := etf.Marshal(v)
	if err != nil {
		t.Fatalf("decoded value (%T) does not re-encode: %v", v, err)
	}
	w, err := etf.Unmarshal(again)
	if err != nil {
		t.Fatalf("re-encoded as %d bytes that do not decode: %v", len(again), err)
	}
	if !termEqual(v, w) {
		t.Fatalf("re-decoded value differs from the decoded one (%T)", v)
	}
	return v, n, true
}

func isSentinel(err error) bool {
	return errors.Is(err, etf.ErrMalformed) || errors.Is(err, etf.ErrTooDeep) ||
		errors.Is(err, etf.ErrTooLarge) || errors.Is(err, etf.ErrUnsupported)
}

// FuzzDecodeDeep builds deep terms from small inputs: open is repeated
// count times, then core, then close count times (a tuple or list header
// and its tail, say), so the decoder meets depths of up to 65,535 with any
// opening and closing bytes. Whatever decodes re-encodes (without
// recursion either) and decodes to an equal value; an error is one of the
// sentinels; a MaxDepth below the depth reached is ErrTooDeep or another
// error found first, never a success.
func FuzzDecodeDeep(f *testing.F) {
	f.Add([]byte{108, 0, 0, 0, 1}, uint16(3000), []byte{106}, []byte{106})
	f.Add([]byte{104, 1}, uint16(60000), []byte{97, 1}, []byte{})
	f.Add([]byte{116, 0, 0, 0, 1, 97, 1}, uint16(5000), []byte{116, 0, 0, 0, 0}, []byte{})
	f.Add([]byte{108, 0, 0, 0, 2}, uint16(5000), []byte{106}, []byte{97, 7, 106})    // [Acc, X]
	f.Add([]byte{108, 0, 0, 0, 1}, uint16(100), []byte{107, 0, 1, 5}, []byte{97, 1}) // improper tails
	f.Fuzz(func(t *testing.T, open []byte, count uint16, core, close []byte) {
		if len(open)+len(close) > 16 || len(core) > 64 {
			return
		}
		b := []byte{131}
		b = append(b, bytes.Repeat(open, int(count))...)
		b = append(b, core...)
		b = append(b, bytes.Repeat(close, int(count))...)
		var d etf.Decoder
		v, n, ok := decodeRoundTrip(t, &d, b)
		if !ok {
			return
		}
		if count > 2 {
			shallow := etf.Decoder{MaxDepth: 1}
			if _, _, err := shallow.DecodeVersioned(b[:n]); err == nil && depthOf(v) > 1 {
				t.Fatalf("MaxDepth 1 decoded a term of depth %d", depthOf(v))
			}
		}
	})
}

// depthOf is a value's nesting (0 for a scalar), counted without recursion.
func depthOf(v any) int {
	type item struct {
		v any
		d int
	}
	deepest := 0
	stack := []item{{v, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		deepest = max(deepest, it.d)
		var elems []any
		switch x := it.v.(type) {
		case []any:
			elems = x
		case etf.Tuple:
			elems = x
		case etf.ImproperList:
			elems = append(append(elems, x.Elems...), x.Tail)
		case map[any]any:
			for k, e := range x {
				elems = append(elems, k, e)
			}
		case etf.Map:
			for _, p := range x {
				elems = append(elems, p.Key, p.Value)
			}
		}
		for _, e := range elems {
			stack = append(stack, item{e, it.d + 1})
		}
	}
	return deepest
}

// FuzzDecodeBounds: under any MaxSize and with ShareInput, decoding gives
// what the plain decoder gives or an error, allocates in proportion to the
// input (never by a length field: at most 64 bytes a byte, plus a
// constant), and a shared binary does not change when the input is not
// written.
func FuzzDecodeBounds(f *testing.F) {
	f.Add([]byte{109, 0, 1, 0, 0}, uint32(1<<20), true)
	f.Add([]byte{111, 0, 0x3f, 0xff, 0xf8, 0, 1}, uint32(1<<23), false)
	f.Add([]byte{108, 0xff, 0xff, 0xff, 0xff, 108, 0xff, 0xff, 0xff, 0xf0, 106}, uint32(100), true)
	f.Add([]byte{116, 0x7f, 0xff, 0xff, 0xff, 106}, uint32(0), false)
	f.Fuzz(func(t *testing.T, b []byte, maxSize uint32, share bool) {
		if len(b) > 1<<16 {
			return
		}
		// A large binary to share: b's bytes repeated into 64 KiB.
		if share && len(b) > 0 && len(b) < 1<<10 {
			body := bytes.Repeat(b, (64<<10)/len(b)+1)
			b = append(binary.BigEndian.AppendUint32([]byte{109}, uint32(len(body))), body...)
		}
		d := etf.Decoder{MaxSize: int(maxSize % (1 << 24)), ShareInput: share}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v, n, err := d.Decode(b)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64*uint64(len(b))+1<<20 {
			t.Fatalf("%d bytes allocated for %d bytes of input", alloc, len(b))
		}
		plain, pn, perr := (&etf.Decoder{MaxSize: d.MaxSize}).Decode(b)
		if (err == nil) != (perr == nil) || n != pn {
			t.Fatalf("with ShareInput: %v (%d bytes); without: %v (%d bytes)", err, n, perr, pn)
		}
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if !termEqual(v, plain) {
			t.Fatalf("with ShareInput the value differs")
		}
	})
}
