package etf_test

import (
	"errors"
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
	d := etf.Decoder{AtomRefs: refs, MaxSize: 1 << 20, MaxDepth: 256}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := d.DecodeVersioned(b)
		if err != nil {
			if !errors.Is(err, etf.ErrMalformed) && !errors.Is(err, etf.ErrTooDeep) &&
				!errors.Is(err, etf.ErrTooLarge) && !errors.Is(err, etf.ErrUnsupported) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if n < 2 || n > len(b) {
			t.Fatalf("used %d of %d bytes", n, len(b))
		}
		again, err := etf.Marshal(v)
		if err != nil {
			t.Fatalf("decoded %#v does not re-encode: %v", v, err)
		}
		w, err := etf.Unmarshal(again)
		if err != nil {
			t.Fatalf("re-encoded %#v as %v: %v", v, again, err)
		}
		if !termEqual(v, w) {
			t.Fatalf("re-decoded\n %#v\nwant %#v", w, v)
		}
	})
}
