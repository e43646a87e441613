package etf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/colonyrt/colony/actor"
)

// Encoder turns Go values into terms. Its zero value encodes with the zero
// Node (no local pids). An Encoder holds no state between calls: it may be
// copied and used from several goroutines at once.
type Encoder struct {
	Node Node
}

// Append appends v's encoding (one term, without the version byte) to dst.
// On error dst is returned with what was appended to it undefined past its
// original length; the error wraps ErrUnsupported, ErrTooDeep or ErrTooLarge.
func (e *Encoder) Append(dst []byte, v any) ([]byte, error) {
	s := newEncodeState(&e.Node)
	defer s.release()
	return s.term(dst, v, 0)
}

// AppendVersioned appends the version byte 131 and v's encoding to dst: the
// bytes of term_to_binary(V).
func (e *Encoder) AppendVersioned(dst []byte, v any) ([]byte, error) {
	return e.Append(append(dst, versionTag), v)
}

type encodeState struct {
	node *Node
	// The open tuples, lists and maps, innermost last: the encoder does
	// not recurse through them (see term). Only the reflection path
	// (registered structs, typed slices and maps) recurses, bounded by
	// DefaultMaxDepth levels.
	stack []eframe
	keys  []any // the keys of the open maps, in the order they go out
	// A cycle check (Brent's): the identity of the container at the last
	// power-of-two depth still on the stack; a container pushed below it
	// with the same identity encloses itself, and the value is infinite.
	mark      containerID
	markDepth int
}

// Encode states are pooled with their stacks, so that encoding allocates
// nothing once warm; a state that grew past keptFrames frames (or keys)
// goes to the garbage collector instead.
var encodeStates = sync.Pool{New: func() any { return new(encodeState) }}

const keptFrames = 1024

func newEncodeState(n *Node) *encodeState {
	s := encodeStates.Get().(*encodeState)
	s.node = n
	return s
}

// release returns s to the pool; its stack is empty (term pops what it
// pushed, on error too).
func (s *encodeState) release() {
	s.node = nil
	s.mark, s.markDepth = containerID{}, 0
	if cap(s.stack) > keptFrames || cap(s.keys) > keptFrames {
		s.stack, s.keys = nil, nil
	}
	encodeStates.Put(s)
}

// containerID names the memory a container's elements are read from.
type containerID struct {
	kind uint8
	ptr  unsafe.Pointer
	n    int
}

// Kinds of encoder frames.
const (
	eTuple = iota
	eList  // elements, then [] or the tail
	eMap   // a map[any]any's keys (in keys) and values
	ePairs // a Map's keys and values
)

// eframe is an open container.
type eframe struct {
	kind     uint8
	improper bool // eList: tail follows the elements
	i        int  // the next element (a map's keys and values counted apart)
	vals     []any
	pairs    Map
	m        map[any]any
	keys     []any
	tail     any
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}

// term appends v's encoding. depth counts the recursive calls through the
// reflection path; tuples, lists and maps are encoded in a loop, their
// frames on s.stack.
func (s *encodeState) term(dst []byte, v any, depth int) ([]byte, error) {
	if depth > DefaultMaxDepth {
		return dst, fmt.Errorf("%w: Go value nested deeper than %d through reflection", ErrTooDeep, DefaultMaxDepth)
	}
	base := len(s.stack)
	for {
		var err error
		if dst, err = s.one(dst, v, depth); err != nil {
			for len(s.stack) > base {
				s.pop()
			}
			return dst, err
		}
		for {
			if len(s.stack) == base {
				return dst, nil
			}
			var more bool
			if v, more, dst = s.next(&s.stack[len(s.stack)-1], dst); more {
				break
			}
			s.pop()
		}
	}
}

// push opens a container whose elements come next; id is the memory they
// are read from, for the cycle check.
func (s *encodeState) push(f eframe, id containerID) error {
	d := len(s.stack) + 1
	if s.markDepth > 0 && id == s.mark {
		return fmt.Errorf("%w: a Go value that contains itself (a cycle)", ErrTooDeep)
	}
	if d&(d-1) == 0 {
		s.mark, s.markDepth = id, d
	}
	if len(s.stack) == cap(s.stack) { // double (append grows a large slice by a quarter)
		s.stack = append(make([]eframe, 0, max(8, 2*cap(s.stack))), s.stack...)
	}
	s.stack = append(s.stack, f)
	return nil
}

func (s *encodeState) pop() {
	f := &s.stack[len(s.stack)-1]
	if f.kind == eMap {
		clear(s.keys[len(s.keys)-len(f.keys):])
		s.keys = s.keys[:len(s.keys)-len(f.keys)]
	}
	*f = eframe{}
	s.stack = s.stack[:len(s.stack)-1]
	if len(s.stack) < s.markDepth {
		s.mark, s.markDepth = containerID{}, 0
	}
}

// next returns the top frame's next element to encode (more), or appends
// what closes the frame and reports none.
func (s *encodeState) next(f *eframe, dst []byte) (any, bool, []byte) {
	i := f.i
	f.i++
	switch f.kind {
	case eTuple:
		if i < len(f.vals) {
			return f.vals[i], true, dst
		}
	case eList:
		switch {
		case i < len(f.vals):
			return f.vals[i], true, dst
		case i == len(f.vals) && f.improper:
			return f.tail, true, dst
		case i == len(f.vals):
			return nil, false, append(dst, tagNil)
		}
	case eMap:
		if i < 2*len(f.keys) {
			k := f.keys[i/2]
			if i%2 == 0 {
				return k, true, dst
			}
			return f.m[k], true, dst
		}
	case ePairs:
		if i < 2*len(f.pairs) {
			if i%2 == 0 {
				return f.pairs[i/2].Key, true, dst
			}
			return f.pairs[i/2].Value, true, dst
		}
	}
	return nil, false, dst
}

// one appends v, or the header of a container whose elements it pushes.
func (s *encodeState) one(dst []byte, v any, depth int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return appendAtom(dst, "undefined"), nil
	case actor.Atom:
		return appendAtomChecked(dst, x)
	case bool:
		if x {
			return appendAtom(dst, "true"), nil
		}
		return appendAtom(dst, "false"), nil
	case int:
		return appendInt(dst, int64(x)), nil
	case string:
		return appendBinary(dst, x), nil
	case []byte:
		return appendBinary(dst, x), nil
	case Tuple:
		return s.tuple(dst, x)
	case []any:
		return s.list(dst, x, containerID{eList, unsafe.Pointer(unsafe.SliceData(x)), len(x)})
	case map[any]any:
		return s.anyMap(dst, x)
	case actor.Pid:
		return s.pid(dst, x)
	case Ref:
		return s.ref(dst, x)
	case float64:
		return appendFloat(dst, x)
	case *big.Int:
		return appendBig(dst, x)
	case int64:
		return appendInt(dst, x), nil
	case int32:
		return appendInt(dst, int64(x)), nil
	case int16:
		return appendInt(dst, int64(x)), nil
	case int8:
		return appendInt(dst, int64(x)), nil
	case uint:
		return appendUint(dst, uint64(x)), nil
	case uint64:
		return appendUint(dst, x), nil
	case uint32:
		return appendInt(dst, int64(x)), nil
	case uint16:
		return appendInt(dst, int64(x)), nil
	case uint8:
		return appendInt(dst, int64(x)), nil
	case float32:
		return appendFloat(dst, float64(x))
	case ImproperList:
		return s.improper(dst, x, depth)
	case BitBinary:
		return appendBitBinary(dst, x)
	case Export:
		return s.export(dst, x)
	case Fun:
		return appendFun(dst, x)
	case Port:
		return appendPort(dst, x)
	case Map:
		return s.pairs(dst, x)
	case big.Int:
		return appendBig(dst, &x)
	}
	return s.reflectTerm(dst, reflect.ValueOf(v), depth)
}

func (s *encodeState) tuple(dst []byte, t Tuple) ([]byte, error) {
	dst = appendTupleHeader(dst, len(t))
	if len(t) == 0 {
		return dst, nil
	}
	return dst, s.push(eframe{kind: eTuple, vals: t}, containerID{eTuple, unsafe.Pointer(unsafe.SliceData(t)), len(t)})
}

func appendTupleHeader(dst []byte, n int) []byte {
	if n < 256 {
		return append(dst, tagSmallTuple, byte(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, tagLargeTuple), uint32(n))
}

// list appends the proper list of elems. A list of small integers 0..255
// shorter than 65,536 goes as STRING_EXT, as OTP's own encoder sends it.
func (s *encodeState) list(dst []byte, elems []any, id containerID) ([]byte, error) {
	if len(elems) == 0 {
		return append(dst, tagNil), nil
	}
	if len(elems) <= math.MaxUint16 && byteInts(elems) {
		dst = binary.BigEndian.AppendUint16(append(dst, tagString), uint16(len(elems)))
		for _, el := range elems {
			dst = append(dst, byte(el.(int)))
		}
		return dst, nil
	}
	return s.listElems(dst, eframe{kind: eList, vals: elems}, id)
}

// listElems appends LIST_EXT's header and opens f for its elements and
// tail.
func (s *encodeState) listElems(dst []byte, f eframe, id containerID) ([]byte, error) {
	if uint64(len(f.vals)) > math.MaxUint32 {
		return dst, fmt.Errorf("%w: list of %d elements", ErrTooLarge, len(f.vals))
	}
	dst = binary.BigEndian.AppendUint32(append(dst, tagList), uint32(len(f.vals)))
	return dst, s.push(f, id)
}

// byteInts reports whether every element is an int in 0..255.
func byteInts(elems []any) bool {
	for _, el := range elems {
		n, ok := el.(int)
		if !ok || n < 0 || n > 255 {
			return false
		}
	}
	return true
}

// improper appends [Elems | Tail]. A Tail that is itself a list is
// flattened into Elems, so the wire form is canonical; a nil Tail is the
// atom undefined, as nil is everywhere. The cycle check names the list by
// its own Elems, which a flattened copy does not share.
func (s *encodeState) improper(dst []byte, l ImproperList, depth int) ([]byte, error) {
	id := containerID{eList, unsafe.Pointer(unsafe.SliceData(l.Elems)), len(l.Elems)}
	elems, tail := l.Elems, l.Tail
	for {
		switch t := tail.(type) {
		case []any:
			return s.list(dst, append(elems[:len(elems):len(elems)], t...), id)
		case ImproperList:
			elems, tail = append(elems[:len(elems):len(elems)], t.Elems...), t.Tail
			continue
		}
		break
	}
	if len(elems) == 0 {
		return s.one(dst, tail, depth) // not a list
	}
	return s.listElems(dst, eframe{kind: eList, vals: elems, improper: true, tail: tail}, id)
}

func (s *encodeState) anyMap(dst []byte, m map[any]any) ([]byte, error) {
	dst = binary.BigEndian.AppendUint32(append(dst, tagMap), uint32(len(m)))
	if len(m) == 0 {
		return dst, nil
	}
	start := len(s.keys)
	for k := range m {
		s.keys = append(s.keys, k)
	}
	keys := s.keys[start:]
	if len(m) <= smallMapKeys { // in term order, as OTP sends it (mapsort.go)
		slices.SortFunc(keys, compareKeys)
	}
	err := s.push(eframe{kind: eMap, m: m, keys: keys}, containerID{eMap, *(*unsafe.Pointer)(unsafe.Pointer(&m)), 0})
	if err != nil {
		clear(keys)
		s.keys = s.keys[:start]
	}
	return dst, err
}

func (s *encodeState) pairs(dst []byte, m Map) ([]byte, error) {
	if uint64(len(m)) > math.MaxUint32 {
		return dst, fmt.Errorf("%w: map of %d pairs", ErrTooLarge, len(m))
	}
	dst = binary.BigEndian.AppendUint32(append(dst, tagMap), uint32(len(m)))
	if len(m) == 0 {
		return dst, nil
	}
	return dst, s.push(eframe{kind: ePairs, pairs: m}, containerID{ePairs, unsafe.Pointer(unsafe.SliceData(m)), len(m)})
}

// pid appends NEW_PID_EXT: a pid of Node.Sys with Node's name and creation,
// a remote pid with its own identity.
func (s *encodeState) pid(dst []byte, p actor.Pid) ([]byte, error) {
	var node actor.Atom
	var creation, id, serial uint32
	if r, ok := p.Remote(); ok {
		node, creation, id, serial = r.Node, r.Creation, r.ID, r.Serial
	} else if s.node.Sys == nil {
		return dst, unsupported("pid %v: not remote, and the Encoder's Node has no System", p)
	} else if id, serial, ok = s.node.Sys.LocalParts(p); ok {
		if s.node.Name == "" {
			return dst, unsupported("local pid %v: the Encoder's Node has no name", p)
		}
		node, creation = s.node.Name, s.node.Creation
	} else {
		return dst, unsupported("pid %v: not issued by the Encoder's System", p)
	}
	var err error
	if dst, err = appendAtomChecked(append(dst, tagNewPid), node); err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint32(dst, id)
	dst = binary.BigEndian.AppendUint32(dst, serial)
	return binary.BigEndian.AppendUint32(dst, creation), nil
}

func (s *encodeState) ref(dst []byte, r Ref) ([]byte, error) {
	if r.Len < 1 || r.Len > 5 {
		return dst, unsupported("ref with %d words (1..5)", r.Len)
	}
	dst = binary.BigEndian.AppendUint16(append(dst, tagNewerRef), uint16(r.Len))
	var err error
	if dst, err = appendAtomChecked(dst, r.Node); err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint32(dst, r.Creation)
	for _, w := range r.Words[:r.Len] {
		dst = binary.BigEndian.AppendUint32(dst, w)
	}
	return dst, nil
}

func appendPort(dst []byte, p Port) ([]byte, error) {
	tag := byte(tagNewPort)
	if p.ID > math.MaxUint32 {
		tag = tagV4Port
	}
	dst, err := appendAtomChecked(append(dst, tag), p.Node)
	if err != nil {
		return dst, err
	}
	if tag == tagV4Port {
		dst = binary.BigEndian.AppendUint64(dst, p.ID)
	} else {
		dst = binary.BigEndian.AppendUint32(dst, uint32(p.ID))
	}
	return binary.BigEndian.AppendUint32(dst, p.Creation), nil
}

func (s *encodeState) export(dst []byte, x Export) ([]byte, error) {
	dst, err := appendAtomChecked(append(dst, tagExport), x.Module)
	if err != nil {
		return dst, err
	}
	if dst, err = appendAtomChecked(dst, x.Function); err != nil {
		return dst, err
	}
	return append(dst, tagSmallInteger, x.Arity), nil
}

// appendFun appends a Fun's raw encoding after checking its frame: the tag
// and a Size that matches. Its inside is the peer's business.
func appendFun(dst []byte, f Fun) ([]byte, error) {
	if len(f.Raw) < 5 || f.Raw[0] != tagNewFun || int(binary.BigEndian.Uint32(f.Raw[1:])) != len(f.Raw)-1 {
		return dst, unsupported("Fun.Raw is not a NEW_FUN_EXT encoding")
	}
	return append(dst, f.Raw...), nil
}

// appendAtom appends an atom known to be valid.
func appendAtom(dst []byte, a string) []byte {
	if len(a) < 256 {
		dst = append(dst, tagSmallAtomUTF8, byte(len(a)))
	} else {
		dst = binary.BigEndian.AppendUint16(append(dst, tagAtomUTF8), uint16(len(a)))
	}
	return append(dst, a...)
}

func appendAtomChecked(dst []byte, a actor.Atom) ([]byte, error) {
	if len(a) > MaxAtomChars {
		if !utf8.ValidString(string(a)) {
			return dst, unsupported("atom is not valid UTF-8")
		}
		if n := utf8.RuneCountInString(string(a)); n > MaxAtomChars {
			return dst, unsupported("atom of %d characters (at most %d)", n, MaxAtomChars)
		}
	} else if !utf8.ValidString(string(a)) {
		return dst, unsupported("atom is not valid UTF-8")
	}
	return appendAtom(dst, string(a)), nil
}

func appendInt(dst []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= 255:
		return append(dst, tagSmallInteger, byte(n))
	case n >= math.MinInt32 && n <= math.MaxInt32:
		return binary.BigEndian.AppendUint32(append(dst, tagInteger), uint32(int32(n)))
	case n < 0:
		return appendSmallBig(dst, 1, uint64(-n)) // -MinInt64 wraps to 1<<63, right as unsigned
	default:
		return appendSmallBig(dst, 0, uint64(n))
	}
}

func appendUint(dst []byte, n uint64) []byte {
	if n <= math.MaxInt32 {
		return appendInt(dst, int64(n))
	}
	return appendSmallBig(dst, 0, n)
}

// appendSmallBig appends SMALL_BIG_EXT of a magnitude that needs more than 4
// bytes or is negative past int32.
func appendSmallBig(dst []byte, sign byte, mag uint64) []byte {
	n := 0
	for m := mag; m != 0; m >>= 8 {
		n++
	}
	dst = append(dst, tagSmallBig, byte(n), sign)
	for i := 0; i < n; i++ {
		dst = append(dst, byte(mag>>(8*i)))
	}
	return dst
}

func appendBig(dst []byte, x *big.Int) ([]byte, error) {
	if x == nil {
		return appendAtom(dst, "undefined"), nil // as every nil pointer
	}
	if x.IsInt64() {
		return appendInt(dst, x.Int64()), nil
	}
	nb := (x.BitLen() + 7) / 8
	if nb > MaxBigBytes {
		return dst, fmt.Errorf("%w: integer of %d bytes (at most %d)", ErrTooLarge, nb, MaxBigBytes)
	}
	var sign byte
	if x.Sign() < 0 {
		sign = 1
	}
	if nb < 256 {
		dst = append(dst, tagSmallBig, byte(nb), sign)
	} else {
		dst = binary.BigEndian.AppendUint32(append(dst, tagLargeBig), uint32(nb))
		dst = append(dst, sign)
	}
	start := len(dst)
	dst = append(dst, make([]byte, nb)...)
	x.FillBytes(dst[start:]) // big-endian magnitude; the wire is little-endian
	for i, j := start, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	return dst, nil
}

func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, unsupported("float %v: Erlang floats are finite", f)
	}
	return binary.BigEndian.AppendUint64(append(dst, tagNewFloat), math.Float64bits(f)), nil
}

func appendBinary[S string | []byte](dst []byte, b S) []byte {
	dst = binary.BigEndian.AppendUint32(append(dst, tagBinary), uint32(len(b)))
	return append(dst, b...)
}

// appendBitBinary appends BIT_BINARY_EXT, or BINARY_EXT for a whole number
// of bytes (Bits 8, or no bytes), as OTP does. Unused bits go out as zero.
func appendBitBinary(dst []byte, b BitBinary) ([]byte, error) {
	if b.Bits == 0 || b.Bits > 8 {
		return dst, unsupported("BitBinary with Bits %d (1..8)", b.Bits)
	}
	if uint64(len(b.Bytes)) > math.MaxUint32 {
		return dst, fmt.Errorf("%w: binary of %d bytes", ErrTooLarge, len(b.Bytes))
	}
	if b.Bits == 8 || len(b.Bytes) == 0 {
		return appendBinary(dst, b.Bytes), nil
	}
	dst = binary.BigEndian.AppendUint32(append(dst, tagBitBinary), uint32(len(b.Bytes)))
	dst = append(dst, b.Bits)
	dst = append(dst, b.Bytes...)
	dst[len(dst)-1] &= byte(0xff << (8 - b.Bits))
	return dst, nil
}
