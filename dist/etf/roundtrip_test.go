package etf_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"math/big"
	"reflect"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/internal/testsys"
	"pgregory.net/rapid"
)

func compress(t testing.TB, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// testFun is a NEW_FUN_EXT encoding in the form OTP 25 gives fun(X) -> X
// + 1 end, with free variables free (nil: none), without the version byte.
func testFun(free ...[]byte) []byte {
	b := []byte{112, 0, 0, 0, 0, 1, 2, 155, 126, 197, 106, 136, 181, 30, 12, 91, 166, 43, 122, 78, 198, 94, 0, 0, 0, 0}
	b = binary.BigEndian.AppendUint32(b, uint32(len(free)))
	b = append(b, 119, 7, 'e', 't', 'f', 't', 'e', 's', 't', 97, 0, 98, 0, 20, 219, 246)
	b = append(b, 88, 119, 13, 'n', 'o', 'n', 'o', 'd', 'e', '@', 'n', 'o', 'h', 'o', 's', 't', 0, 0, 0, 80, 0, 0, 0, 0, 0, 0, 0, 0)
	for _, f := range free {
		b = append(b, f...)
	}
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
	return b
}

// TestRoundTrip is the property Go → ETF → Go: every canonical value, of
// every kind and nested, pids local and remote included, decodes to an
// equal value, and re-encodes to the same bytes (Go maps aside, whose order
// is Go's).
func TestRoundTrip(t *testing.T) {
	sys := testsys.Start(t, actor.Config{})
	node := etf.Node{Name: "colony@127.0.0.1", Creation: 77, Sys: sys}
	enc := etf.Encoder{Node: node}
	dec := etf.Decoder{Node: node}
	g := &termGen{sys: sys, self: node, funs: [][]byte{testFun(), testFun([]byte{97, 1}, []byte{106})}, maxDepth: 4}
	rapid.Check(t, func(t *rapid.T) {
		v := g.term(t, 0)
		b, err := enc.AppendVersioned(nil, v)
		if err != nil {
			t.Fatalf("encode %#v: %v", v, err)
		}
		got, n, err := dec.DecodeVersioned(b)
		if err != nil {
			t.Fatalf("decode %#v from %v: %v", v, b, err)
		}
		if n != len(b) {
			t.Fatalf("decode used %d of %d bytes", n, len(b))
		}
		if !termEqual(got, v) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, v)
		}
		// Decoding is also exact on a prefix: a second term after it is
		// left alone, and any cut of the bytes is an error.
		cut := rapid.IntRange(1, len(b)-1).Draw(t, "cut")
		if _, _, err := dec.DecodeVersioned(b[:cut]); err == nil {
			t.Fatalf("decode of %d of %d bytes: no error", cut, len(b))
		} else if !errors.Is(err, etf.ErrMalformed) {
			t.Fatalf("decode of %d of %d bytes: %v", cut, len(b), err)
		}
	})
}

// TestPidMapping: local pids go out with the Node's identity and come back
// as the same local pid; a pid of the same name but another creation (an
// earlier incarnation of the node) is remote.
func TestPidMapping(t *testing.T) {
	sys := testsys.Start(t, actor.Config{})
	node := etf.Node{Name: "me@127.0.0.1", Creation: 5, Sys: sys}
	local := sys.LocalPid(3, 9)
	b, err := (&etf.Encoder{Node: node}).Append(nil, local)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte{88, 119, 12}, "me@127.0.0.1"...)
	want = append(want, 0, 0, 0, 3, 0, 0, 0, 9, 0, 0, 0, 5)
	if !bytes.Equal(b, want) {
		t.Fatalf("local pid encoded as %v, want %v", b, want)
	}
	d := etf.Decoder{Node: node}
	v, _, err := d.Decode(b)
	if err != nil || v != local {
		t.Fatalf("decoded %v, %v; want %v", v, err, local)
	}
	old := bytes.Clone(b)
	binary.BigEndian.PutUint32(old[len(old)-4:], 4)
	v, _, err = d.Decode(old)
	if p, ok := v.(actor.Pid); err != nil || !ok || !p.IsRemote() {
		t.Fatalf("pid of creation 4 decoded as %v, %v; want a remote pid", v, err)
	}
	if id, _ := v.(actor.Pid).Remote(); id != (actor.RemoteID{Node: "me@127.0.0.1", Creation: 4, ID: 3, Serial: 9}) {
		t.Fatalf("remote id %+v", id)
	}
	// Without a System no pid is local, and a local pid cannot be encoded.
	v, _, err = (&etf.Decoder{Node: etf.Node{Name: "me@127.0.0.1", Creation: 5}}).Decode(b)
	if p, ok := v.(actor.Pid); err != nil || !ok || !p.IsRemote() {
		t.Fatalf("decoded without a System: %v, %v", v, err)
	}
	if _, err := etf.Marshal(local); !errors.Is(err, etf.ErrUnsupported) {
		t.Fatalf("Marshal of a local pid without a Node: %v", err)
	}
	other := testsys.Start(t, actor.Config{})
	if _, err := (&etf.Encoder{Node: node}).Append(nil, other.LocalPid(1, 1)); !errors.Is(err, etf.ErrUnsupported) {
		t.Fatalf("pid of another System: %v", err)
	}
}

// TestRegistered: a registered struct is the tuple {Tag, Fields...}, and
// that tuple comes back as the struct; a tuple with the tag but fields of
// the wrong types stays a Tuple.
func TestRegistered(t *testing.T) {
	b, err := etf.Marshal(point{1, -2})
	if err != nil {
		t.Fatal(err)
	}
	tuple, err := etf.Marshal(etf.Tuple{actor.Atom("etf_test_point"), 1, -2})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, tuple) {
		t.Fatalf("point encodes as %v, the tuple as %v", b, tuple)
	}
	v, err := etf.Unmarshal(b)
	if err != nil || v != (point{1, -2}) {
		t.Fatalf("decoded %#v, %v", v, err)
	}
	for _, odd := range []etf.Tuple{
		{actor.Atom("etf_test_point"), 1, actor.Atom("x")},                     // a field of the wrong type
		{actor.Atom("etf_test_point"), 1},                                      // another arity
		{actor.Atom("etf_test_point"), 1, new(big.Int).Lsh(big.NewInt(1), 70)}, // out of int's range
	} {
		b, err := etf.Marshal(odd)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := etf.Unmarshal(b); err != nil || !termEqual(v, odd) {
			t.Errorf("%v decoded as %#v, %v; want the Tuple", odd, v, err)
		}
	}
	// A charlist for a string field, a binary for []byte, true for an Atom.
	e := etf.Tuple{actor.Atom("etf_test_envelope"), remote(t, "a@b", 1, 2, 3), etf.Ref{Node: "a@b", Len: 1},
		actor.Atom("body"), []any{}, "data", []any{104, 105}, 0.5, 7, map[any]any{}, actor.Atom("undefined"), false, true}
	b, err = etf.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	v, err = etf.Unmarshal(b)
	env, ok := v.(envelope)
	if err != nil || !ok || env.Name != "hi" || string(env.Data) != "data" || env.Kind != "true" || env.Big != nil {
		t.Fatalf("envelope decoded as %#v, %v", v, err)
	}

	//lint:ignore U1000 never set: Register must refuse the unexported field
	type unexported struct{ a int }
	type badField struct{ C chan int }
	for name, err := range map[string]error{
		"not a struct":  etf.Register[int]("x"),
		"unexported":    etf.Register[unexported]("x"),
		"bad field":     etf.Register[badField]("x"),
		"tag true":      etf.Register[single]("true"),
		"empty tag":     etf.Register[single](""),
		"own term form": etf.Register[etf.Ref]("x"),
	} {
		if !errors.Is(err, etf.ErrUnsupported) {
			t.Errorf("%s: Register = %v, want ErrUnsupported", name, err)
		}
	}
	type clash struct{ A, B int }
	if err := etf.Register[clash]("etf_test_point"); !errors.Is(err, etf.ErrRegistered) {
		t.Errorf("tag and arity of point: %v", err)
	}
	if err := etf.Register[point]("other"); !errors.Is(err, etf.ErrRegistered) {
		t.Errorf("point again: %v", err)
	}
	// single shares wrapper's tag with another arity: both decode.
	if v := mustRoundTrip(t, single{5}); !reflect.DeepEqual(v, single{5}) {
		t.Errorf("single decoded as %#v", v)
	}
	if w := (wrapper{P: point{1, 2}, Points: []point{}, T: etf.Tuple{}}); !termEqual(mustRoundTrip(t, w), w) {
		t.Errorf("wrapper decoded as %#v", mustRoundTrip(t, w))
	}
	// A Tuple field holding what reads as a registered struct keeps it as
	// the tuple.
	if w := (wrapper{Points: []point{}, T: etf.Tuple{actor.Atom("etf_test_point"), 3, 4}}); !termEqual(mustRoundTrip(t, w), w) {
		t.Errorf("wrapper decoded as %#v", mustRoundTrip(t, w))
	}
}

func mustRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := etf.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := etf.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
