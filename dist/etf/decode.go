package etf

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/colonyrt/colony/actor"
)

// Decoder turns terms into Go values. Its zero value decodes with the zero
// Node, no atom cache and the default bounds. A Decoder holds no state
// between calls: it may be copied, and used from several goroutines at once
// as long as AtomRefs is not written meanwhile.
type Decoder struct {
	// Node maps pids of the local System (see the package doc).
	Node Node
	// AtomRefs is the atom table of the distribution header a term
	// follows: ATOM_CACHE_REF i is AtomRefs[i]. An index past its end is
	// ErrMalformed; '' is an atom like any other (OTP caches it in every
	// REG_SEND). nil: no header, and every such reference is ErrMalformed.
	AtomRefs []actor.Atom
	// MaxDepth, if positive, bounds nesting (ErrTooDeep past it). 0: no
	// bound but the input's length (the decoder does not recurse: each
	// level costs at least two input bytes and a frame of its stack).
	MaxDepth int
	// MaxSize bounds the bytes one term may span, and the claimed
	// uncompressed size of a compressed term (0: DefaultMaxSize).
	MaxSize int
	// ShareInput says the input is never written again while the decoded
	// value lives: a binary of at least 64 KiB that is more than a quarter
	// of the input is then returned as a string that shares the input's
	// memory instead of a copy (as OTP makes such a binary of a
	// distribution message a sub-binary of the message's buffer), so a
	// large message costs its bytes once. The input is then kept alive as
	// long as the string, at most 4 times the string's size.
	ShareInput bool
	// NewNode, if set, is called with each decoded pid whose node identity
	// the decoding introduced to the process (actor.InternRemotePid's
	// created): a distribution connection counts them against its peer's
	// budget. An error it returns ends the decoding, wrapped in
	// ErrTooLarge.
	NewNode func(p actor.Pid) error
}

// Decode decodes one term (without the version byte) from the start of b and
// returns it with the number of bytes it spans. Errors wrap ErrMalformed,
// ErrTooDeep, ErrTooLarge or ErrUnsupported.
func (d *Decoder) Decode(b []byte) (v any, n int, err error) {
	s := d.state(b)
	v, err = s.value()
	if err != nil {
		return nil, 0, err
	}
	return v, s.pos, nil
}

// DecodeVersioned decodes a term that starts with the version byte 131, as
// binary_to_term does: a COMPRESSED term (tag 80) after it is inflated
// first, within MaxSize. n counts the version byte.
func (d *Decoder) DecodeVersioned(b []byte) (v any, n int, err error) {
	if len(b) == 0 {
		return nil, 0, malformed(0, "no version byte")
	}
	if b[0] != versionTag {
		return nil, 0, malformed(0, "version byte %d, want %d", b[0], versionTag)
	}
	if len(b) > 1 && b[1] == tagCompressed {
		v, n, err = d.decodeCompressed(b[2:])
		if err != nil {
			return nil, 0, err
		}
		return v, n + 2, nil
	}
	v, n, err = d.Decode(b[1:])
	if err != nil {
		return nil, 0, err
	}
	return v, n + 1, nil
}

// decodeCompressed decodes COMPRESSED's body: a 4-byte uncompressed size and
// a zlib stream of exactly that many bytes, which hold one term. The size is
// the peer's claim: it is checked against MaxSize before anything is
// allocated, and the inflater reads at most one byte past it.
func (d *Decoder) decodeCompressed(b []byte) (any, int, error) {
	if len(b) < 4 {
		return nil, 0, malformed(2, "truncated compressed size")
	}
	size := binary.BigEndian.Uint32(b)
	if uint64(size) > uint64(d.maxSize()) {
		return nil, 0, fmt.Errorf("%w: compressed term claims %d bytes (at most %d)", ErrTooLarge, size, d.maxSize())
	}
	r := bytes.NewReader(b[4:])
	zr, err := zlib.NewReader(r)
	if err != nil {
		return nil, 0, malformed(6, "zlib: %v", err)
	}
	defer zr.Close()
	// Inflate in chunks so a size the stream does not honour costs no more
	// than the stream's own length.
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(zr, int64(size)+1)); err != nil {
		return nil, 0, malformed(6, "zlib: %v", err)
	}
	if buf.Len() != int(size) {
		return nil, 0, malformed(6, "compressed term inflates to %d bytes, claims %d", buf.Len(), size)
	}
	plain := buf.Bytes()
	s := d.state(plain)
	s.share = true // plain is this call's own
	v, err := s.value()
	if err != nil {
		return nil, 0, err
	}
	if s.pos != len(plain) {
		return nil, 0, malformed(6, "compressed data holds %d bytes after the term", len(plain)-s.pos)
	}
	return v, 4 + len(b[4:]) - r.Len(), nil
}

func (d *Decoder) maxSize() int {
	if d.MaxSize > 0 {
		return d.MaxSize
	}
	return DefaultMaxSize
}

func (d *Decoder) state(b []byte) decodeState {
	s := decodeState{d: d, b: b, maxDepth: max(d.MaxDepth, 0), share: d.ShareInput}
	if m := d.maxSize(); len(b) > m {
		s.b, s.cut = b[:m], true
	}
	s.reg = registered.Load()
	return s
}

// emptyList and emptyTuple are [] and {} boxed once: a term of many of them
// costs no allocation each. Sharing them is safe: a slice of capacity 0
// cannot be written through, and append copies it.
var (
	emptyList  any = []any{}
	emptyTuple any = Tuple{}
)

// decodeState is one Decode call's cursor over b.
type decodeState struct {
	d        *Decoder
	b        []byte // the input, cut at MaxSize
	pos      int
	cut      bool // b was cut at MaxSize: running out is ErrTooLarge
	share    bool // large binaries may share b (binary)
	maxDepth int  // 0: no bound but the input's length
	reg      *registry
	cacheHit bool    // an ATOM_CACHE_REF was resolved (Fun keeps raw bytes only without)
	stack    []frame // the open containers, innermost last
	reserved int     // bytes the open containers' awaited elements need at least
}

func malformed(off int, format string, args ...any) error {
	return fmt.Errorf("%w: "+format+" (offset %d)", append(append([]any{ErrMalformed}, args...), off)...)
}

// need checks that n more bytes are there.
func (s *decodeState) need(n int) error {
	if n <= len(s.b)-s.pos && n >= 0 {
		return nil
	}
	if s.cut {
		return fmt.Errorf("%w: term spans more than MaxSize (%d bytes)", ErrTooLarge, len(s.b))
	}
	return malformed(s.pos, "truncated: %d bytes needed, %d left", n, len(s.b)-s.pos)
}

// needElems checks that n elements of at least min bytes each can be there,
// in the bytes left that the open containers' awaited elements do not
// need.
func (s *decodeState) needElems(n uint64, min int) error {
	if n > uint64(max(len(s.b)-s.pos-s.reserved, 0))/uint64(min) {
		if s.cut {
			return fmt.Errorf("%w: term spans more than MaxSize (%d bytes)", ErrTooLarge, len(s.b))
		}
		return malformed(s.pos, "%d elements claimed, %d bytes left", n, len(s.b)-s.pos)
	}
	return nil
}

func (s *decodeState) u8() (byte, error) {
	if err := s.need(1); err != nil {
		return 0, err
	}
	s.pos++
	return s.b[s.pos-1], nil
}

func (s *decodeState) u16() (uint16, error) {
	if err := s.need(2); err != nil {
		return 0, err
	}
	s.pos += 2
	return binary.BigEndian.Uint16(s.b[s.pos-2:]), nil
}

func (s *decodeState) u32() (uint32, error) {
	if err := s.need(4); err != nil {
		return 0, err
	}
	s.pos += 4
	return binary.BigEndian.Uint32(s.b[s.pos-4:]), nil
}

func (s *decodeState) bytes(n int) ([]byte, error) {
	if err := s.need(n); err != nil {
		return nil, err
	}
	s.pos += n
	return s.b[s.pos-n : s.pos], nil
}

// The decoder does not recurse: nesting is a stack of frames on the heap
// (decodeState.stack), one per open tuple, list, map or fun, grown as the
// input nests. Depth costs input bytes (a level is at least 2 of them), so
// the stack is bounded by the bytes received, not by a constant, and no
// input can exhaust the goroutine's stack: OTP's decoder takes any depth,
// and `[Acc, X]`, the usual way to append to an iolist, nests as deep as
// the number of appends.
//
// Pre-allocation is bounded by the bytes left: each element a container
// announces needs at least one byte, and the elements the open containers
// still await are reserved (decodeState.reserved), so nested containers
// cannot each claim the same remaining bytes. The slices all the open
// containers pre-allocate hold at most one slot per input byte.

// Frame kinds.
const (
	frameTuple = iota
	frameList  // the elements of a LIST_EXT
	frameTail  // a list whose tail is being decoded
	frameMap
	frameFun
)

// frame is an open container.
type frame struct {
	kind uint8
	flag bool // frameMap: every key so far can key a Go map; frameFun: the enclosing cacheHit
	left int  // elements still to come (a map's keys and values apart; a list's tail counted)
	a    int  // frameMap: the pair being read; frameFun: the offset of its tag
	vals []any
	// pairs holds a map's pairs.
	pairs Map
}

// value decodes one term.
func (s *decodeState) value() (any, error) {
	for {
		if len(s.stack) > 0 {
			s.reserved-- // the top frame's next element starts here
		}
		v, pushed, err := s.head()
		if err != nil {
			return nil, err
		}
		if pushed {
			continue // the new frame's first element comes next
		}
		// v is complete: hand it to the open containers, closing those it
		// completes.
		for {
			if len(s.stack) == 0 {
				return v, nil
			}
			var done bool
			if v, done, err = s.put(&s.stack[len(s.stack)-1], v); err != nil {
				return nil, err
			}
			if !done {
				break
			}
			s.stack[len(s.stack)-1] = frame{} // let its values go
			s.stack = s.stack[:len(s.stack)-1]
		}
	}
}

// push opens a container of left elements (left > 0). The stack doubles
// when full (append grows a large slice by a quarter, which allocates 5
// times the final size in all).
func (s *decodeState) push(f frame) {
	s.reserved += f.left
	if len(s.stack) == cap(s.stack) {
		s.stack = append(make([]frame, 0, max(8, 2*cap(s.stack))), s.stack...)
	}
	s.stack = append(s.stack, f)
}

// head decodes the term at pos: a complete value, or the opening of a
// container that awaits its elements (pushed).
func (s *decodeState) head() (v any, pushed bool, err error) {
	if s.maxDepth > 0 && len(s.stack) > s.maxDepth {
		return nil, false, fmt.Errorf("%w: deeper than %d (offset %d)", ErrTooDeep, s.maxDepth, s.pos)
	}
	start := s.pos
	tag, err := s.u8()
	if err != nil {
		return nil, false, err
	}
	switch tag {
	case tagSmallInteger:
		b, err := s.u8()
		return int(b), false, err
	case tagInteger:
		n, err := s.u32()
		return int(int32(n)), false, err
	case tagAtom, tagSmallAtom, tagAtomUTF8, tagSmallAtomUTF8, tagAtomCacheRef:
		s.pos = start
		e, err := s.atomEntry()
		if err != nil {
			return nil, false, err
		}
		switch e.a {
		case "true":
			return true, false, nil
		case "false":
			return false, false, nil
		}
		return e.box, false, nil
	case tagSmallTuple, tagLargeTuple:
		n, err := s.uvar(tag == tagSmallTuple)
		if err != nil {
			return nil, false, err
		}
		if err := s.needElems(uint64(n), 1); err != nil {
			return nil, false, err
		}
		if n == 0 {
			return emptyTuple, false, nil
		}
		s.push(frame{kind: frameTuple, left: int(n), vals: make(Tuple, 0, n)})
		return nil, true, nil
	case tagNil:
		return emptyList, false, nil
	case tagString:
		n, err := s.u16()
		if err != nil {
			return nil, false, err
		}
		b, err := s.bytes(int(n))
		if err != nil {
			return nil, false, err
		}
		l := make([]any, n)
		for i, c := range b {
			l[i] = int(c)
		}
		return l, false, nil
	case tagList:
		n, err := s.u32()
		if err != nil {
			return nil, false, err
		}
		if err := s.needElems(uint64(n)+1, 1); err != nil { // the elements and the tail
			return nil, false, err
		}
		f := frame{kind: frameList, left: int(n) + 1}
		if n > 0 {
			f.vals = make([]any, 0, n)
		}
		s.push(f)
		if n > 0 {
			return nil, true, nil
		}
		// No elements: the tail is next.
		v, pushed, err := s.listEnd()
		if err == nil && !pushed {
			s.stack = s.stack[:len(s.stack)-1] // closed at once
		}
		return v, pushed, err
	case tagBinary:
		n, err := s.u32()
		if err != nil {
			return nil, false, err
		}
		b, err := s.bytes(int(n))
		if err != nil {
			return nil, false, err
		}
		return s.binary(b), false, nil
	case tagBitBinary:
		v, err := s.bitBinary()
		return v, false, err
	case tagNewFloat:
		if err := s.need(8); err != nil {
			return nil, false, err
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(s.b[s.pos:]))
		s.pos += 8
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false, malformed(start, "float %v", f)
		}
		return f, false, nil
	case tagFloat:
		v, err := s.oldFloat()
		return v, false, err
	case tagSmallBig, tagLargeBig:
		v, err := s.bigTerm(tag)
		return v, false, err
	case tagMap:
		n, err := s.u32()
		if err != nil {
			return nil, false, err
		}
		if err := s.needElems(uint64(n), 2); err != nil {
			return nil, false, err
		}
		if n == 0 {
			return map[any]any{}, false, nil
		}
		s.push(frame{kind: frameMap, flag: true, left: 2 * int(n), pairs: make(Map, n)})
		return nil, true, nil
	case tagNewPid, tagPid:
		v, err := s.pid(tag)
		return v, false, err
	case tagNewerRef, tagNewRef, tagRef:
		v, err := s.ref(tag)
		return v, false, err
	case tagNewPort, tagV4Port, tagPort:
		v, err := s.port(tag)
		return v, false, err
	case tagExport:
		v, err := s.export()
		return v, false, err
	case tagNewFun:
		return nil, true, s.funHead(start)
	case tagFun, tagLocal:
		return nil, false, fmt.Errorf("%w: tag %d (offset %d)", ErrUnsupported, tag, start)
	case tagCompressed:
		return nil, false, malformed(start, "COMPRESSED inside a term")
	}
	return nil, false, malformed(start, "unknown tag %d", tag)
}

// put stores v, the element just decoded, in the container f. done: f is
// complete, and v its value.
func (s *decodeState) put(f *frame, v any) (any, bool, error) {
	f.left--
	switch f.kind {
	case frameTuple:
		f.vals = append(f.vals, v)
		if f.left > 0 {
			return nil, false, nil
		}
		t := Tuple(f.vals)
		if s.reg != nil {
			if tag, ok := t[0].(actor.Atom); ok {
				if r, ok := s.reg.fromTuple(tag, t); ok {
					return r, true, nil
				}
			}
		}
		return t, true, nil
	case frameList:
		f.vals = append(f.vals, v)
		if f.left > 1 {
			return nil, false, nil
		}
		v, pushed, err := s.listEnd()
		return v, !pushed, err
	case frameTail:
		if len(f.vals) == 0 {
			return v, true, nil
		}
		return ImproperList{Elems: f.vals, Tail: v}, true, nil
	case frameMap:
		p := &f.pairs[f.a]
		if f.left%2 == 1 { // a key
			p.Key = v
			if f.flag && !goKey(v) {
				f.flag = false
			}
			return nil, false, nil
		}
		p.Value = v
		f.a++
		if f.left > 0 {
			return nil, false, nil
		}
		if !f.flag {
			return f.pairs, true, nil
		}
		m := make(map[any]any, len(f.pairs))
		for _, p := range f.pairs {
			m[p.Key] = p.Value
		}
		if len(m) != len(f.pairs) {
			return f.pairs, true, nil
		}
		return m, true, nil
	case frameFun:
		return s.funPut(f, v)
	}
	panic("etf: unknown frame kind")
}

// listEnd reads what follows the top frame's (a frameList's) elements: []
// closes it; a tail that is a list (OTP never sends one) or a string is
// read on into the same slice, in a loop, so the value is canonical and a
// chain of list tails costs linear time and no depth; any other tail is
// the next term, and the frame awaits it (pushed).
func (s *decodeState) listEnd() (v any, pushed bool, err error) {
	f := &s.stack[len(s.stack)-1]
	for {
		if err := s.need(1); err != nil {
			return nil, false, err
		}
		switch s.b[s.pos] {
		case tagNil:
			s.pos++
			s.reserved -= f.left // the tail slot
			vals := f.vals
			if len(vals) == 0 {
				return emptyList, false, nil
			}
			return vals, false, nil
		case tagList:
			s.pos++
			s.reserved-- // the tail slot: taken by this list's elements and tail
			m, err := s.u32()
			if err != nil {
				return nil, false, err
			}
			if err := s.needElems(uint64(m)+1, 1); err != nil {
				return nil, false, err
			}
			s.reserved += int(m) + 1
			f.left = int(m) + 1
			if m > 0 {
				f.vals = slices.Grow(f.vals, int(m))
				return nil, true, nil
			}
			continue
		case tagString:
			s.pos++
			s.reserved -= f.left
			m, err := s.u16()
			if err != nil {
				return nil, false, err
			}
			b, err := s.bytes(int(m))
			if err != nil {
				return nil, false, err
			}
			if len(f.vals)+len(b) == 0 {
				return emptyList, false, nil
			}
			vals := slices.Grow(f.vals, len(b))
			for _, c := range b {
				vals = append(vals, int(c))
			}
			return vals, false, nil
		}
		f.kind = frameTail // not a list: the tags of lists are above
		return nil, true, nil
	}
}

// atom decodes an atom in any of its encodings.
func (s *decodeState) atom() (actor.Atom, error) {
	e, err := s.atomEntry()
	if err != nil {
		return "", err
	}
	return e.a, nil
}

// atomEntry decodes an atom into its interned entry.
func (s *decodeState) atomEntry() (*atomEntry, error) {
	start := s.pos
	tag, err := s.u8()
	if err != nil {
		return nil, err
	}
	var n int
	switch tag {
	case tagSmallAtomUTF8, tagSmallAtom:
		c, err := s.u8()
		if err != nil {
			return nil, err
		}
		n = int(c)
	case tagAtomUTF8, tagAtom:
		c, err := s.u16()
		if err != nil {
			return nil, err
		}
		n = int(c)
	case tagAtomCacheRef:
		i, err := s.u8()
		if err != nil {
			return nil, err
		}
		if int(i) >= len(s.d.AtomRefs) {
			// The distribution header sets every index a message uses.
			return nil, malformed(start, "ATOM_CACHE_REF %d not set by the header", i)
		}
		a := s.d.AtomRefs[i]
		s.cacheHit = true
		return &atomEntry{a: a, box: a}, nil
	default:
		return nil, malformed(start, "tag %d where an atom was expected", tag)
	}
	b, err := s.bytes(n)
	if err != nil {
		return nil, err
	}
	if tag == tagAtom || tag == tagSmallAtom {
		if n > MaxAtomChars { // one character a byte
			return nil, malformed(start, "atom of %d characters (at most %d)", n, MaxAtomChars)
		}
		return latin1Atom(b), nil
	}
	if !utf8.Valid(b) {
		return nil, malformed(start, "atom is not valid UTF-8")
	}
	if n > MaxAtomChars && utf8.RuneCount(b) > MaxAtomChars {
		return nil, malformed(start, "atom of %d characters (at most %d)", utf8.RuneCount(b), MaxAtomChars)
	}
	return intern(b), nil
}

// latin1Atom converts a Latin-1 atom's bytes to UTF-8.
func latin1Atom(b []byte) *atomEntry {
	for i, c := range b {
		if c >= 0x80 {
			u := make([]byte, i, 2*len(b))
			copy(u, b)
			for _, c := range b[i:] {
				u = utf8.AppendRune(u, rune(c))
			}
			return intern(u)
		}
	}
	return intern(b)
}

// The atom table: atoms recur (every pid names its node, every message
// its tags), so a decoded atom is looked up in a fixed-size, lossy,
// process-wide table of interned atoms, each with its boxed any form. A hit
// costs a hash and a compare and allocates nothing; a miss allocates the
// atom and replaces the slot's entry. The table never grows: at most
// atomSlots entries of at most 1,020 bytes (255 four-byte characters) each,
// whatever a peer sends. Slots are atomic pointers to immutable entries, so
// readers need no lock; two decoders racing on one slot each store a valid
// entry and one wins.
const atomSlots = 4096

type atomEntry struct {
	a   actor.Atom
	box any // a, boxed once
}

var atomTable [atomSlots]atomic.Pointer[atomEntry]

// intern returns the atom for b (valid UTF-8).
func intern(b []byte) *atomEntry {
	h := uint32(2166136261) // FNV-1a
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &atomTable[h%atomSlots]
	if e := slot.Load(); e != nil && string(e.a) == string(b) {
		return e
	}
	a := actor.Atom(b)
	e := &atomEntry{a: a, box: a}
	slot.Store(e)
	return e
}

// binary returns a binary's bytes as a string: a copy, or, when the
// decoder may keep the input (Decoder.ShareInput) and the binary is large
// and more than a quarter of it, b itself, as OTP makes such a binary of a
// distribution message a sub-binary of the message's buffer. Either way the
// input is held at most 4 times the binary's size.
func (s *decodeState) binary(b []byte) string {
	if s.share && len(b) >= shareMin && len(b) > len(s.b)/4 {
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	return string(b)
}

// shareMin is the least binary ShareInput shares (a copy of less is
// cheap).
const shareMin = 64 << 10

func (s *decodeState) bitBinary() (any, error) {
	start := s.pos - 1
	n, err := s.u32()
	if err != nil {
		return nil, err
	}
	bits, err := s.u8()
	if err != nil {
		return nil, err
	}
	b, err := s.bytes(int(n))
	if err != nil {
		return nil, err
	}
	// OTP takes 0 bytes with Bits 0 (<<>>) and n > 0 bytes with Bits 1..8.
	if (n == 0) != (bits == 0) || bits > 8 {
		return nil, malformed(start, "bit binary of %d bytes with %d bits in the last", n, bits)
	}
	if bits == 8 || n == 0 {
		return string(b), nil
	}
	c := append([]byte(nil), b...)
	c[n-1] &= byte(0xff << (8 - bits))
	return BitBinary{Bytes: c, Bits: bits}, nil
}

// oldFloat decodes FLOAT_EXT: 31 bytes of "%.20e" text, NUL padded.
func (s *decodeState) oldFloat() (any, error) {
	start := s.pos - 1
	b, err := s.bytes(31)
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, malformed(start, "FLOAT_EXT %q", b)
	}
	return f, nil
}

// uvar reads a length or a number of one byte (small) or four.
func (s *decodeState) uvar(small bool) (uint32, error) {
	if small {
		c, err := s.u8()
		return uint32(c), err
	}
	return s.u32()
}

// bigTerm decodes SMALL_BIG_EXT or LARGE_BIG_EXT after its tag.
func (s *decodeState) bigTerm(tag byte) (any, error) {
	start := s.pos - 1
	n, err := s.uvar(tag == tagSmallBig)
	if err != nil {
		return nil, err
	}
	if n > MaxBigBytes {
		return nil, fmt.Errorf("%w: integer of %d bytes (at most %d, offset %d)", ErrTooLarge, n, MaxBigBytes, start)
	}
	return s.big(int(n))
}

// big decodes a bignum's sign and n little-endian digit bytes: an int when it
// fits, a *big.Int otherwise. The digits are checked to be there before
// anything is allocated.
func (s *decodeState) big(n int) (any, error) {
	sign, err := s.u8()
	if err != nil {
		return nil, err
	}
	b, err := s.bytes(n)
	if err != nil {
		return nil, err
	}
	top := n
	for top > 0 && b[top-1] == 0 {
		top--
	}
	if top <= 8 {
		var m uint64
		for i := top - 1; i >= 0; i-- {
			m = m<<8 | uint64(b[i])
		}
		if sign == 0 && m <= math.MaxInt64 { // any other sign byte is negative, as in OTP
			return int(m), nil
		}
		if sign != 0 && m <= 1<<63 {
			return int(-int64(m)), nil // 1<<63 wraps to MinInt64, as wanted
		}
	}
	be := make([]byte, top)
	for i := range be {
		be[i] = b[top-1-i]
	}
	x := new(big.Int).SetBytes(be)
	if sign != 0 {
		x.Neg(x)
	}
	return x, nil
}

// goKey reports whether k can be a key of a Go map with the meaning it has
// as an Erlang map key: comparable, and == exactly when the terms match.
func goKey(k any) bool {
	switch k.(type) {
	case actor.Atom, bool, int, float64, string, actor.Pid, Ref, Port, Export:
		return true
	case nil, *big.Int, Tuple, []any, map[any]any, Map, ImproperList, BitBinary, Fun:
		return false
	}
	return comparableValue(k) // a registered struct
}

func (s *decodeState) pid(tag byte) (any, error) {
	start := s.pos - 1
	node, err := s.atom()
	if err != nil {
		return nil, err
	}
	if err := s.need(8); err != nil {
		return nil, err
	}
	id := binary.BigEndian.Uint32(s.b[s.pos:])
	serial := binary.BigEndian.Uint32(s.b[s.pos+4:])
	s.pos += 8
	creation, err := s.uvar(tag != tagNewPid)
	if err != nil {
		return nil, err
	}
	n := &s.d.Node
	if n.Sys != nil && node == n.Name && creation == n.Creation {
		return n.Sys.LocalPid(id, serial), nil
	}
	p, created, err := actor.InternRemotePid(actor.RemoteID{Node: node, Creation: creation, ID: id, Serial: serial})
	if errors.Is(err, actor.ErrTooManyNodes) {
		return nil, fmt.Errorf("%w: %w (offset %d)", ErrTooLarge, err, start)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w (offset %d)", ErrMalformed, err, start)
	}
	if created && s.d.NewNode != nil {
		if err := s.d.NewNode(p); err != nil {
			return nil, fmt.Errorf("%w: %w (offset %d)", ErrTooLarge, err, start)
		}
	}
	return p, nil
}

func (s *decodeState) ref(tag byte) (any, error) {
	start := s.pos - 1
	n := uint16(1)
	if tag != tagRef {
		var err error
		if n, err = s.u16(); err != nil {
			return nil, err
		}
		if n < 1 || n > 5 {
			return nil, malformed(start, "reference of %d words (1..5)", n)
		}
	}
	node, err := s.atom()
	if err != nil {
		return nil, err
	}
	r := Ref{Node: node, Len: uint8(n)}
	readCreation := func() (err error) {
		r.Creation, err = s.uvar(tag != tagNewerRef)
		return err
	}
	if tag != tagRef {
		if err := readCreation(); err != nil {
			return nil, err
		}
	}
	if err := s.need(4 * int(n)); err != nil {
		return nil, err
	}
	for i := range int(n) {
		r.Words[i] = binary.BigEndian.Uint32(s.b[s.pos:])
		s.pos += 4
	}
	if tag == tagRef {
		if err := readCreation(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (s *decodeState) port(tag byte) (any, error) {
	node, err := s.atom()
	if err != nil {
		return nil, err
	}
	p := Port{Node: node}
	switch tag {
	case tagV4Port:
		if err := s.need(12); err != nil {
			return nil, err
		}
		p.ID = binary.BigEndian.Uint64(s.b[s.pos:])
		p.Creation = binary.BigEndian.Uint32(s.b[s.pos+8:])
		s.pos += 12
	case tagNewPort:
		if err := s.need(8); err != nil {
			return nil, err
		}
		p.ID = uint64(binary.BigEndian.Uint32(s.b[s.pos:]))
		p.Creation = binary.BigEndian.Uint32(s.b[s.pos+4:])
		s.pos += 8
	default:
		if err := s.need(5); err != nil {
			return nil, err
		}
		p.ID = uint64(binary.BigEndian.Uint32(s.b[s.pos:]))
		p.Creation = uint32(s.b[s.pos+4])
		s.pos += 5
	}
	return p, nil
}

func (s *decodeState) export() (any, error) {
	m, err := s.atom()
	if err != nil {
		return nil, err
	}
	f, err := s.atom()
	if err != nil {
		return nil, err
	}
	// OTP sends the arity as SMALL_INTEGER_EXT and takes any integer
	// encoding of 0..255.
	start := s.pos
	if err := s.need(1); err != nil {
		return nil, err
	}
	var a any
	switch tag := s.b[s.pos]; tag {
	case tagSmallInteger, tagInteger:
		s.pos++
		if tag == tagSmallInteger {
			var c byte
			c, err = s.u8()
			a = int(c)
		} else {
			var c uint32
			c, err = s.u32()
			a = int(int32(c))
		}
	case tagSmallBig, tagLargeBig:
		s.pos++
		a, err = s.bigTerm(tag)
	default:
		return nil, malformed(start, "export arity of tag %d", tag)
	}
	if err != nil {
		return nil, err
	}
	n, ok := a.(int)
	if !ok || n < 0 || n > 255 {
		return nil, malformed(start, "export arity %v", a)
	}
	return Export{Module: m, Function: f, Arity: uint8(n)}, nil
}

// funHead checks NEW_FUN_EXT's frame and fixed fields (Size, Arity, Uniq,
// Index, NumFree, Module) and opens a frame for the terms that follow:
// OldIndex, OldUniq, Pid and NumFree free variables, which must end
// exactly at Size. The fun is kept as its bytes (funPut).
func (s *decodeState) funHead(start int) error {
	size, err := s.u32()
	if err != nil {
		return err
	}
	if size < 4+1+16+4+4 {
		return malformed(start, "fun of size %d", size)
	}
	if err := s.need(int(size) - 4); err != nil {
		return err
	}
	s.pos += 1 + 16 + 4 // Arity, Uniq, Index: there, as Size said
	numFree, _ := s.u32()
	f := frame{kind: frameFun, flag: s.cacheHit, a: start}
	s.cacheHit = false
	if _, err := s.atom(); err != nil {
		return err
	}
	if err := s.needElems(uint64(numFree)+3, 1); err != nil {
		return err
	}
	f.left = int(numFree) + 3
	s.push(f)
	return nil
}

// funPut takes one of a fun's terms (see funHead).
func (s *decodeState) funPut(f *frame, v any) (any, bool, error) {
	start := f.a
	switch i := int(binary.BigEndian.Uint32(s.b[start+26:])) + 3 - f.left - 1; {
	case i < 2 && !isInt(v):
		return nil, false, malformed(start, "fun with a non-integer index or uniq")
	case i == 2:
		if _, ok := v.(actor.Pid); !ok {
			return nil, false, malformed(start, "fun without a pid")
		}
	}
	if f.left > 0 {
		return nil, false, nil
	}
	end := start + 1 + int(binary.BigEndian.Uint32(s.b[start+1:]))
	if s.pos != end {
		return nil, false, malformed(start, "fun of size %d ends at %d", end-start-1, s.pos-start-1)
	}
	if s.cacheHit {
		// Its raw bytes would name atoms by this connection's cache.
		return nil, false, fmt.Errorf("%w: fun with atom cache references (offset %d)", ErrUnsupported, start)
	}
	s.cacheHit = f.flag
	return Fun{Raw: append([]byte(nil), s.b[start:end]...)}, true, nil
}

func isInt(v any) bool {
	switch v.(type) {
	case int, *big.Int:
		return true
	}
	return false
}
