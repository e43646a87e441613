package etf

import (
	"errors"

	"github.com/colonyrt/colony/actor"
)

// Tags of the External Term Format (erts guide "External Term Format").
const (
	versionTag = 131

	tagNewFloat      = 70
	tagBitBinary     = 77
	tagCompressed    = 80
	tagAtomCacheRef  = 82
	tagNewPid        = 88
	tagNewPort       = 89
	tagNewerRef      = 90
	tagSmallInteger  = 97
	tagInteger       = 98
	tagFloat         = 99
	tagAtom          = 100
	tagRef           = 101
	tagPort          = 102
	tagPid           = 103
	tagSmallTuple    = 104
	tagLargeTuple    = 105
	tagNil           = 106
	tagString        = 107
	tagList          = 108
	tagBinary        = 109
	tagSmallBig      = 110
	tagLargeBig      = 111
	tagNewFun        = 112
	tagExport        = 113
	tagNewRef        = 114
	tagSmallAtom     = 115
	tagMap           = 116
	tagFun           = 117
	tagAtomUTF8      = 118
	tagSmallAtomUTF8 = 119
	tagV4Port        = 120
	tagLocal         = 121
)

// Decode errors wrap one of these (errors.Is). Encode errors wrap
// ErrUnsupported (a Go value with no term form), ErrTooDeep or ErrTooLarge.
var (
	// ErrMalformed: the bytes are not a well-formed term (truncated, an
	// unknown tag, a length past the end, invalid UTF-8 in an atom, ...).
	ErrMalformed = errors.New("etf: malformed term")
	// ErrTooDeep: the term nests deeper than the decoder's MaxDepth (or a Go
	// value deeper than the encoder's).
	ErrTooDeep = errors.New("etf: term nested too deep")
	// ErrTooLarge: the term is past a size bound: MaxSize, a compressed
	// term's claimed size, a big integer's digits, or the process-wide table
	// of remote node identities.
	ErrTooLarge = errors.New("etf: term too large")
	// ErrUnsupported: a well-formed term this codec does not decode (the
	// removed FUN_EXT, LOCAL_EXT), or a Go value it cannot encode.
	ErrUnsupported = errors.New("etf: unsupported term")
)

// Default bounds of a Decoder whose MaxSize is 0, and the codec's fixed
// bounds.
const (
	// DefaultMaxDepth bounds the nesting of the Go values the encoder
	// walks through reflection (registered structs, typed slices and maps),
	// which it does by recursion. Tuples, lists and maps ([]any, Tuple,
	// map[any]any, Map, ImproperList) nest without bound; one that contains
	// itself is found and refused (ErrTooDeep). The decoder has no depth
	// bound but its input's length unless Decoder.MaxDepth sets one.
	DefaultMaxDepth = 2048
	// DefaultMaxSize bounds the bytes one term may span, and a compressed
	// term's uncompressed size: 128 MiB (a 70 MiB binary fits, with room).
	DefaultMaxSize = 128 << 20
	// MaxBigBytes bounds a big integer's magnitude in bytes, decoded or
	// encoded: OTP's own bound, (2^19 - 1) digits of 8 bytes, 4,194,296
	// bytes (about 10.1 million decimal digits); binary_to_term refuses
	// more.
	MaxBigBytes = (1<<19 - 1) * 8
	// MaxAtomChars is Erlang's limit on an atom's length in characters.
	MaxAtomChars = 255
)

// Tuple is an Erlang tuple {A, B, C}.
type Tuple []any

// ImproperList is a list whose tail is not []: [A, B | Tail]. Elems is never
// empty and Tail is never a list in a decoded value; the encoder flattens a
// Tail that is a list.
type ImproperList struct {
	Elems []any
	Tail  any
}

// Ref is an Erlang reference (NEWER_REFERENCE_EXT): the node that made it,
// the node's creation, and Len (1..5) 32-bit words; Words past Len are zero.
// It is comparable and may be a map key. The zero Ref (Len 0) names no
// reference: encoding it is ErrUnsupported.
type Ref struct {
	Node     actor.Atom
	Creation uint32
	Len      uint8
	Words    [5]uint32
}

// Port is an Erlang port identifier (V4_PORT_EXT, NEW_PORT_EXT).
type Port struct {
	Node     actor.Atom
	Creation uint32
	ID       uint64
}

// BitBinary is a bitstring whose length is not a whole number of bytes
// (BIT_BINARY_EXT): Bits (1..7 in a decoded value) of the last byte of Bytes
// are used, the most significant ones; the unused low bits are zero (the
// encoder clears them). Bits 0, as in the zero value, is ErrUnsupported.
type BitBinary struct {
	Bytes []byte
	Bits  uint8
}

// Export is an external fun, fun Module:Function/Arity (EXPORT_EXT).
type Export struct {
	Module, Function actor.Atom
	Arity            uint8
}

// Fun is a local fun (NEW_FUN_EXT), which has no meaning in Go. Raw is its
// whole encoding, tag included; it is sent back as it came.
type Fun struct{ Raw []byte }

// Map is an Erlang map that a Go map[any]any cannot hold: one with a key Go
// cannot compare (a tuple, list, map, bitstring or fun), a *big.Int key
// (compared by pointer in Go), or two keys Go takes for equal (0.0 and
// -0.0). Pairs keep wire order. Encoding a Map sends its pairs as they are.
type Map []MapPair

// MapPair is one association of a Map.
type MapPair struct{ Key, Value any }

// Node is the identity that maps the local System's pids to and from the
// wire. Sys may be nil: then no pid is local. The zero Node (no name, no
// System) decodes every pid as remote and encodes remote pids only.
type Node struct {
	Name     actor.Atom
	Creation uint32
	Sys      *actor.System
}

// Marshal is term_to_binary: the version byte 131 and v's encoding, with the
// zero Node (so a local pid cannot be encoded; remote pids can).
func Marshal(v any) ([]byte, error) {
	var e Encoder
	return e.AppendVersioned(nil, v)
}

// Unmarshal is binary_to_term with the zero Node: b must hold exactly one
// versioned term (compressed or not) and nothing after it.
func Unmarshal(b []byte) (any, error) {
	var d Decoder
	v, n, err := d.DecodeVersioned(b)
	if err != nil {
		return nil, err
	}
	if n != len(b) {
		return nil, malformed(n, "%d bytes after the term", len(b)-n)
	}
	return v, nil
}
