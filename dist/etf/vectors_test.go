package etf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"runtime"
	"strings"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// otpTuple is term_to_binary({ok, foo, 1, -5, 300, 1 bsl 40, -(1 bsl 70),
// 1.5, <<"ab">>, "ab", [1,foo|bar], #{a=>1}, <<1:3>>, fun erlang:abs/1, [],
// true}, [{minor_version,2}]) from OTP 25, kept literal so that the test
// runs without Erlang.
var otpTuple = []byte{131, 104, 16, 119, 2, 111, 107, 119, 3, 102, 111, 111, 97, 1, 98, 255, 255, 255, 251, 98, 0, 0, 1, 44, 110, 6, 0, 0, 0, 0, 0, 0, 1, 110, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 64, 70, 63, 248, 0, 0, 0, 0, 0, 0, 109, 0, 0, 0, 2, 97, 98, 107, 0, 2, 97, 98, 108, 0, 0, 0, 2, 97, 1, 119, 3, 102, 111, 111, 119, 3, 98, 97, 114, 116, 0, 0, 0, 1, 119, 1, 97, 97, 1, 77, 0, 0, 0, 1, 3, 32, 113, 119, 6, 101, 114, 108, 97, 110, 103, 119, 3, 97, 98, 115, 97, 1, 106, 119, 4, 116, 114, 117, 101}

func otpTupleValue() etf.Tuple {
	return etf.Tuple{
		actor.Atom("ok"), actor.Atom("foo"), 1, -5, 300, 1 << 40,
		new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 70)),
		1.5, "ab", []any{97, 98},
		etf.ImproperList{Elems: []any{1, actor.Atom("foo")}, Tail: actor.Atom("bar")},
		map[any]any{actor.Atom("a"): 1},
		etf.BitBinary{Bytes: []byte{0x20}, Bits: 3},
		etf.Export{Module: "erlang", Function: "abs", Arity: 1},
		[]any{}, true,
	}
}

func TestOTPTuple(t *testing.T) {
	v, err := etf.Unmarshal(otpTuple)
	if err != nil {
		t.Fatal(err)
	}
	if want := otpTupleValue(); !termEqual(v, want) {
		t.Fatalf("decoded %#v\nwant %#v", v, want)
	}
	b, err := etf.Marshal(otpTupleValue())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, otpTuple) {
		t.Fatalf("encoded %v\nwant %v", b, otpTuple)
	}
}

func remote(t testing.TB, node actor.Atom, creation, id, serial uint32) actor.Pid {
	p, err := actor.RemotePid(actor.RemoteID{Node: node, Creation: creation, ID: id, Serial: serial})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func pow2(n uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), n) }

// otpExpected is what each term of otp.escript's vectors decodes to. same:
// Colony's encoding of the value is byte for byte OTP's.
func otpExpected(t *testing.T) map[string]struct {
	v    any
	same bool
} {
	type e = struct {
		v    any
		same bool
	}
	seq := make(etf.Tuple, 300)
	for i := range seq {
		seq[i] = i + 1
	}
	as := make([]any, 1000)
	for i := range as {
		as[i] = actor.Atom("a")
	}
	return map[string]e{
		"small_int":      {42, true},
		"int_neg":        {-1, true},
		"int_256":        {256, true},
		"int_max32":      {math.MaxInt32, true},
		"int_min32":      {math.MinInt32, true},
		"big_2_32":       {1 << 32, true},
		"big_max64":      {math.MaxInt64, true},
		"big_min64":      {math.MinInt64, true},
		"big_2_63":       {pow2(63), true},
		"big_neg_2_100":  {new(big.Int).Neg(pow2(100)), true},
		"large_big":      {pow2(2100), true},
		"float":          {3.14, true},
		"float_neg_zero": {math.Copysign(0, -1), true},
		"float_ext":      {3.14, false},
		"atom":           {actor.Atom("foo"), true},
		"atom_latin1":    {actor.Atom("héllo"), true},
		"atom_ext":       {actor.Atom("héllo"), false},
		"atom_unicode":   {actor.Atom("日本"), true},
		"atom_long":      {actor.Atom(strings.Repeat("é", 200)), true},
		"atom_empty":     {actor.Atom(""), true},
		"true":           {true, true},
		"false":          {false, true},
		"undefined":      {actor.Atom("undefined"), true},
		"nil":            {[]any{}, true},
		"string":         {[]any{97, 98, 99}, true},
		"string_unicode": {[]any{0x65e5, 0x672c}, true},
		"list":           {[]any{1, actor.Atom("foo"), "x"}, true},
		"improper":       {etf.ImproperList{Elems: []any{actor.Atom("a")}, Tail: actor.Atom("b")}, true},
		"improper_long":  {etf.ImproperList{Elems: []any{1, 2, 3}, Tail: 4.0}, true},
		"tuple0":         {etf.Tuple{}, true},
		"tuple":          {etf.Tuple{actor.Atom("ok"), 1}, true},
		"tuple_large":    {seq, true},
		"binary_empty":   {"", true},
		"binary":         {"\x01\x02\x03", true},
		"bitbin":         {etf.BitBinary{Bytes: []byte{0x20}, Bits: 3}, true},
		"bitbin_long":    {etf.BitBinary{Bytes: []byte{1, 2, 0x30}, Bits: 4}, true},
		"map_empty":      {map[any]any{}, true},
		"map":            {map[any]any{actor.Atom("a"): 1}, true},
		"map_tuple_key":  {etf.Map{{Key: etf.Tuple{actor.Atom("x")}, Value: 1}}, true},
		"map_binary_key": {map[any]any{"id": 7}, true},
		"map_sorted": {map[any]any{actor.Atom("b"): 2, actor.Atom("a"): 1, 1: actor.Atom("x"), 2.0: actor.Atom("y"),
			"k": actor.Atom("z"), true: actor.Atom("t"), -5: actor.Atom("n")}, true},
		"map_big_key": {etf.Map{{Key: -5, Value: actor.Atom("n")}, {Key: pow2(70), Value: actor.Atom("big")},
			{Key: 2.0, Value: actor.Atom("y")}, {Key: true, Value: actor.Atom("t")}}, true},
		"pid":        {remote(t, "nonode@nohost", 0, 1, 0), true},
		"ref":        {etf.Ref{Node: "nonode@nohost", Len: 3, Words: [5]uint32{3, 2, 1}}, true},
		"port":       {etf.Port{Node: "nonode@nohost", ID: 5}, true},
		"export":     {etf.Export{Module: "lists", Function: "map", Arity: 2}, true},
		"fun":        {nil, false}, // checked apart: a Fun of the same bytes
		"compressed": {as, false},
		"nested": {etf.Tuple{actor.Atom("reply"),
			[]any{etf.Tuple{actor.Atom("k"), map[any]any{actor.Atom("n"): []any{1, 2}}}}, "body"}, true},
	}
}

// TestOTPVectors decodes every term of otp.escript's list as real OTP 25
// encodes it, and checks that Colony encodes the expected value to OTP's
// very bytes where the two encoders agree (all but the old FLOAT_EXT and
// ATOM_EXT forms, compression, and funs).
func TestOTPVectors(t *testing.T) {
	vs := otpVectors(t)
	want := otpExpected(t)
	for name, w := range want {
		b, ok := vs[name]
		if !ok {
			t.Errorf("%s: not printed by otp.escript", name)
			continue
		}
		v, err := etf.Unmarshal(b)
		if err != nil {
			t.Errorf("%s: Unmarshal(%x): %v", name, b, err)
			continue
		}
		if name == "fun" {
			if f, ok := v.(etf.Fun); !ok || !bytes.Equal(f.Raw, b[1:]) {
				t.Errorf("fun: decoded %#v, want a Fun of its bytes", v)
			}
			if again, err := etf.Marshal(v); err != nil || !bytes.Equal(again, b) {
				t.Errorf("fun: Marshal = %x, %v; want the bytes it came as", again, err)
			}
			continue
		}
		if !termEqual(v, w.v) {
			t.Errorf("%s: decoded %#v, want %#v", name, v, w.v)
		}
		if !w.same {
			continue
		}
		got, err := etf.Marshal(w.v)
		if err != nil {
			t.Errorf("%s: Marshal: %v", name, err)
		} else if !bytes.Equal(got, b) {
			t.Errorf("%s: Marshal = %x, OTP's is %x", name, got, b)
		}
	}
	for name := range vs {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: printed by otp.escript, not checked", name)
		}
	}
}

// TestLiteralVectors covers the tags OTP 25 no longer produces but a peer
// may send, and canonicalizations of odd but valid input (as OTP 25's
// binary_to_term takes it).
func TestLiteralVectors(t *testing.T) {
	nonode := []byte{119, 13, 'n', 'o', 'n', 'o', 'd', 'e', '@', 'n', 'o', 'h', 'o', 's', 't'}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		in   []byte // without the version byte
		want any
	}{
		{"PID_EXT", cat([]byte{103}, nonode, []byte{0, 0, 0, 7, 0, 0, 0, 1, 2}), remote(t, "nonode@nohost", 2, 7, 1)},
		{"NEW_REFERENCE_EXT", cat([]byte{114, 0, 2}, nonode, []byte{3, 0, 0, 0, 1, 0, 0, 0, 2}),
			etf.Ref{Node: "nonode@nohost", Creation: 3, Len: 2, Words: [5]uint32{1, 2}}},
		{"REFERENCE_EXT", cat([]byte{101}, nonode, []byte{0, 0, 0, 9, 1}),
			etf.Ref{Node: "nonode@nohost", Creation: 1, Len: 1, Words: [5]uint32{9}}},
		{"PORT_EXT", cat([]byte{102}, nonode, []byte{0, 0, 0, 9, 1}), etf.Port{Node: "nonode@nohost", Creation: 1, ID: 9}},
		{"V4_PORT_EXT", cat([]byte{120}, nonode, []byte{1, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 4}),
			etf.Port{Node: "nonode@nohost", Creation: 4, ID: 1<<56 | 9}},
		{"SMALL_ATOM_EXT latin-1", []byte{115, 2, 'h', 0xe9}, actor.Atom("hé")},
		{"ATOM_EXT true", []byte{100, 0, 4, 't', 'r', 'u', 'e'}, true},
		{"ATOM_CACHE_REF", []byte{82, 7}, actor.Atom("cached")},
		{"FLOAT_EXT", append([]byte{99}, []byte("1.50000000000000000000e+00\x00\x00\x00\x00\x00")...), 1.5},
		{"list tail is a list", []byte{108, 0, 0, 0, 1, 97, 1, 108, 0, 0, 0, 1, 97, 2, 106}, []any{1, 2}},
		{"list tail is improper", []byte{108, 0, 0, 0, 1, 97, 1, 108, 0, 0, 0, 1, 97, 2, 97, 3},
			etf.ImproperList{Elems: []any{1, 2}, Tail: 3}},
		{"empty list with a tail", []byte{108, 0, 0, 0, 0, 97, 1}, 1},
		{"bit binary of 8 bits", []byte{77, 0, 0, 0, 1, 8, 0xff}, "\xff"},
		{"bit binary of nothing", []byte{77, 0, 0, 0, 0, 0}, ""},
		{"bit binary unused bits set", []byte{77, 0, 0, 0, 1, 3, 0xff}, etf.BitBinary{Bytes: []byte{0xe0}, Bits: 3}},
		{"big with leading zeros", []byte{110, 3, 0, 5, 0, 0}, 5},
		{"big of no digits", []byte{110, 0, 1}, 0},
		{"big sign 2 is negative", []byte{110, 1, 2, 5}, -5},
		{"big past int64", []byte{110, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}, pow2(63)},
		{"big MinInt64", []byte{110, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0x80}, math.MinInt64},
		{"export with INTEGER_EXT arity", []byte{113, 119, 1, 'm', 119, 1, 'f', 98, 0, 0, 0, 3},
			etf.Export{Module: "m", Function: "f", Arity: 3}},
		{"map colliding in Go", []byte{116, 0, 0, 0, 2, 70, 0, 0, 0, 0, 0, 0, 0, 0, 97, 1, 70, 0x80, 0, 0, 0, 0, 0, 0, 0, 97, 2},
			etf.Map{{Key: 0.0, Value: 1}, {Key: math.Copysign(0, -1), Value: 2}}},
		{"map with a big key", []byte{116, 0, 0, 0, 1, 110, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 106},
			etf.Map{{Key: pow2(64), Value: []any{}}}},
	}
	refs := make([]actor.Atom, 8)
	refs[7] = "cached"
	d := etf.Decoder{AtomRefs: refs}
	for _, tt := range tests {
		v, n, err := d.Decode(tt.in)
		if err != nil {
			t.Errorf("%s: Decode(%v): %v", tt.name, tt.in, err)
			continue
		}
		if n != len(tt.in) {
			t.Errorf("%s: Decode used %d of %d bytes", tt.name, n, len(tt.in))
		}
		if !termEqual(v, tt.want) {
			t.Errorf("%s: decoded %#v, want %#v", tt.name, v, tt.want)
		}
	}
}

// TestMalformed feeds broken terms: each is an error wrapping the right
// sentinel, never a panic, and a huge claimed length allocates nothing.
func TestMalformed(t *testing.T) {
	huge := []byte{0xff, 0xff, 0xff, 0xff}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, etf.ErrMalformed},
		{"unknown tag", []byte{1}, etf.ErrMalformed},
		{"truncated int", []byte{98, 0, 0}, etf.ErrMalformed},
		{"list of 2^32-1 with 10 bytes", append(append([]byte{108}, huge...), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), etf.ErrMalformed},
		{"tuple of 2^32-1", append([]byte{105}, huge...), etf.ErrMalformed},
		{"map of 2^32-1", append([]byte{116}, huge...), etf.ErrMalformed},
		{"binary of 2^32-1", append([]byte{109}, huge...), etf.ErrMalformed},
		{"string past the end", []byte{107, 0xff, 0xff, 1}, etf.ErrMalformed},
		{"big past the bound", append(binary.BigEndian.AppendUint32([]byte{111}, etf.MaxBigBytes+1), 0), etf.ErrTooLarge},
		{"atom not UTF-8", []byte{119, 1, 0xff}, etf.ErrMalformed},
		{"atom of 256 characters", append([]byte{118, 1, 0}, bytes.Repeat([]byte{'a'}, 256)...), etf.ErrMalformed},
		{"atom cache without cache", []byte{82, 1}, etf.ErrMalformed},
		{"NaN", []byte{70, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}, etf.ErrMalformed},
		{"infinity", []byte{70, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0}, etf.ErrMalformed},
		{"FLOAT_EXT garbage", append([]byte{99}, bytes.Repeat([]byte{'x'}, 31)...), etf.ErrMalformed},
		{"bit binary of 0 bits", []byte{77, 0, 0, 0, 1, 0, 1}, etf.ErrMalformed},
		{"bit binary of 9 bits", []byte{77, 0, 0, 0, 1, 9, 1}, etf.ErrMalformed},
		{"bit binary empty with bits", []byte{77, 0, 0, 0, 0, 8}, etf.ErrMalformed},
		{"ref of 6 words", []byte{90, 0, 6, 119, 1, 'a', 0, 0, 0, 0}, etf.ErrMalformed},
		{"ref of 0 words", []byte{90, 0, 0, 119, 1, 'a', 0, 0, 0, 0}, etf.ErrMalformed},
		{"pid with an int node", []byte{88, 97, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, etf.ErrMalformed},
		{"pid with an empty node", []byte{88, 119, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, etf.ErrMalformed},
		{"export arity 256", []byte{113, 119, 1, 'm', 119, 1, 'f', 98, 0, 0, 1, 0}, etf.ErrMalformed},
		{"fun too short", []byte{112, 0, 0, 0, 4}, etf.ErrMalformed},
		{"fun size past the end", append([]byte{112}, huge...), etf.ErrMalformed},
		{"compressed inside", []byte{80, 0, 0, 0, 1}, etf.ErrMalformed},
		{"FUN_EXT", []byte{117, 0, 0, 0, 0}, etf.ErrUnsupported},
		{"LOCAL_EXT", []byte{121}, etf.ErrUnsupported},
	}
	var d etf.Decoder
	for _, tt := range tests {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 10 {
			_, _, err := d.Decode(tt.in)
			if !errors.Is(err, tt.want) {
				t.Errorf("%s: Decode(%v) = %v, want %v", tt.name, tt.in, err, tt.want)
			}
		}
		runtime.ReadMemStats(&after)
		if perCall := (after.TotalAlloc - before.TotalAlloc) / 10; perCall > 64<<10 { // the error's text, and noise
			t.Errorf("%s: %d bytes allocated per call", tt.name, perCall)
		}
	}
}

// TestDepthBound: a term nested past MaxDepth is ErrTooDeep; without
// MaxDepth any depth the input holds decodes (a million nested lists); a Go
// value nested past MaxEncodeDepth (a cycle, say) is ErrTooDeep.
func TestDepthBound(t *testing.T) {
	deep := bytes.Repeat([]byte{104, 1}, 100)
	deep = append(deep, 106)
	d := etf.Decoder{MaxDepth: 50}
	if _, _, err := d.Decode(deep); !errors.Is(err, etf.ErrTooDeep) {
		t.Fatalf("100 nested tuples, MaxDepth 50: %v", err)
	}
	d.MaxDepth = 100
	if _, _, err := d.Decode(deep); err != nil {
		t.Fatalf("100 nested tuples, MaxDepth 100: %v", err)
	}
	// A million nested lists in 6 MB: [[[...[]...]]].
	const levels = 1_000_000
	million := append(bytes.Repeat([]byte{108, 0, 0, 0, 1}, levels), 106)
	million = append(million, bytes.Repeat([]byte{106}, levels)...)
	var def etf.Decoder
	v, n, err := def.Decode(million)
	if err != nil || n != len(million) {
		t.Fatalf("a million nested lists: %d of %d bytes: %v", n, len(million), err)
	}
	for i := range levels {
		l, ok := v.([]any)
		if !ok || len(l) != 1 {
			t.Fatalf("level %d: %T", i, v)
		}
		v = l[0]
	}
	if l, ok := v.([]any); !ok || len(l) != 0 {
		t.Fatalf("innermost: %#v", v)
	}
	if _, _, err := def.Decode(million[:len(million)-1]); !errors.Is(err, etf.ErrMalformed) {
		t.Fatalf("a million nested lists, the last tail missing: %v", err)
	}
	cycle := []any{nil}
	cycle[0] = cycle
	if _, err := etf.Marshal(cycle); !errors.Is(err, etf.ErrTooDeep) {
		t.Fatalf("Marshal of a cycle: %v", err)
	}
}

// TestSizeBound: a term past MaxSize is ErrTooLarge; a compressed term's
// claimed size is checked before inflating, and a stream that inflates past
// its claim is refused after reading one byte past it.
func TestSizeBound(t *testing.T) {
	bin := append([]byte{109, 0, 0, 0, 100}, make([]byte, 100)...)
	d := etf.Decoder{MaxSize: 50}
	if _, _, err := d.Decode(bin); !errors.Is(err, etf.ErrTooLarge) {
		t.Fatalf("105-byte binary, MaxSize 50: %v", err)
	}
	if _, _, err := d.Decode(bin[:20]); !errors.Is(err, etf.ErrMalformed) {
		t.Fatalf("truncated binary under MaxSize: %v", err)
	}
	claim := []byte{131, 80, 0xff, 0xff, 0xff, 0xff, 0x78, 0x9c}
	var def etf.Decoder
	if _, _, err := def.DecodeVersioned(claim); !errors.Is(err, etf.ErrTooLarge) {
		t.Fatalf("compressed claiming 4 GiB: %v", err)
	}
	plain, err := etf.Marshal(strings.Repeat("a", 10000))
	if err != nil {
		t.Fatal(err)
	}
	z := compress(t, plain[1:])
	lie := append([]byte{131, 80, 0, 0, 0, 10}, z...) // claims 10, inflates to 10005
	if _, _, err := def.DecodeVersioned(lie); !errors.Is(err, etf.ErrMalformed) {
		t.Fatalf("compressed past its claim: %v", err)
	}
	honest := append([]byte{131, 80, 0, 0, 0x27, 0x15}, z...)
	v, n, err := def.DecodeVersioned(append(honest, 0xee))
	if err != nil || v != strings.Repeat("a", 10000) || n != len(honest) {
		t.Fatalf("honest compressed: n %d of %d, %v", n, len(honest), err)
	}
	d.MaxSize = 1000
	if _, _, err := d.DecodeVersioned(honest); !errors.Is(err, etf.ErrTooLarge) {
		t.Fatalf("compressed 10005 bytes, MaxSize 1000: %v", err)
	}
}

// TestEncodeRefuses: Go values with no term form are errors.
func TestEncodeRefuses(t *testing.T) {
	type unregistered struct{ A int }
	var zero actor.Pid
	for name, v := range map[string]any{
		"NaN":              math.NaN(),
		"Inf":              math.Inf(1),
		"zero pid":         zero,
		"unregistered":     unregistered{1},
		"chan":             make(chan int),
		"func":             func() {},
		"bad atom":         actor.Atom("\xff"),
		"long atom":        actor.Atom(strings.Repeat("a", 256)),
		"ref of 0 words":   etf.Ref{Node: "a"},
		"ref of 6 words":   etf.Ref{Node: "a", Len: 6},
		"bit binary Bits0": etf.BitBinary{Bytes: []byte{1}},
		"bad fun":          etf.Fun{Raw: []byte{112, 0}},
		"huge big":         new(big.Int).Lsh(big.NewInt(1), 8*etf.MaxBigBytes+1),
	} {
		if _, err := etf.Marshal(v); !errors.Is(err, etf.ErrUnsupported) && !errors.Is(err, etf.ErrTooLarge) {
			t.Errorf("%s: Marshal = %v, want ErrUnsupported", name, err)
		}
	}
}

// TestEncodeConvenience: the non-canonical Go forms encode to the canonical
// term.
func TestEncodeConvenience(t *testing.T) {
	type named int
	type label string
	for _, tt := range []struct {
		in, want any
	}{
		{int8(-3), -3}, {uint8(200), 200}, {uint64(math.MaxUint64), new(big.Int).SetUint64(math.MaxUint64)},
		{int64(math.MinInt64), math.MinInt64}, {uint32(math.MaxUint32), math.MaxUint32},
		{float32(1.5), 1.5}, {[]byte("hi"), "hi"}, {[3]byte{1, 2, 3}, "\x01\x02\x03"},
		{nil, actor.Atom("undefined")}, {actor.Atom("true"), true}, {named(7), 7}, {label("x"), "x"},
		{[]int{1, 2, 300}, []any{1, 2, 300}}, {[]string{"a"}, []any{"a"}}, {[]any(nil), []any{}},
		{map[string]int{"k": 1}, map[any]any{"k": 1}}, {&point{1, 2}, point{1, 2}},
		{etf.ImproperList{Elems: []any{1}, Tail: []any{2}}, []any{1, 2}},
		{etf.ImproperList{Elems: []any{1}, Tail: etf.ImproperList{Elems: []any{2}, Tail: 3}},
			etf.ImproperList{Elems: []any{1, 2}, Tail: 3}},
		{etf.ImproperList{Tail: 5}, 5},
		{etf.BitBinary{Bytes: []byte{1, 2}, Bits: 8}, "\x01\x02"},
		{etf.BitBinary{Bytes: []byte{0xff}, Bits: 1}, etf.BitBinary{Bytes: []byte{0x80}, Bits: 1}},
		{big.NewInt(5), 5}, {(*big.Int)(nil), actor.Atom("undefined")},
		{etf.Map{{Key: actor.Atom("a"), Value: 1}}, map[any]any{actor.Atom("a"): 1}},
	} {
		b, err := etf.Marshal(tt.in)
		if err != nil {
			t.Errorf("Marshal(%#v): %v", tt.in, err)
			continue
		}
		v, err := etf.Unmarshal(b)
		if err != nil || !termEqual(v, tt.want) {
			t.Errorf("Marshal(%#v) decodes to %#v, %v; want %#v", tt.in, v, err, tt.want)
		}
	}
}

// In a distribution header's table the empty atom is an atom like any other (OTP
// caches it in every REG_SEND); only an index past the table is malformed.
func TestAtomRefsHoldTheEmptyAtom(t *testing.T) {
	d := etf.Decoder{AtomRefs: []actor.Atom{"", "x"}}
	v, _, err := d.Decode([]byte{82, 0})
	if err != nil || v != actor.Atom("") {
		t.Fatalf("ATOM_CACHE_REF 0 of {'', x}: %#v, %v", v, err)
	}
	if _, _, err := d.Decode([]byte{82, 2}); !errors.Is(err, etf.ErrMalformed) {
		t.Fatalf("ATOM_CACHE_REF past the table: %v", err)
	}
	if _, _, err := (&etf.Decoder{}).Decode([]byte{82, 0}); !errors.Is(err, etf.ErrMalformed) {
		t.Fatalf("ATOM_CACHE_REF with no table: %v", err)
	}
}
