package etf_test

import (
	"bytes"
	"math/big"
	"reflect"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// otpTuple is term_to_binary({ok, foo, 1, -5, 300, 1 bsl 40, -(1 bsl 70),
// 1.5, <<"ab">>, "ab", [1,foo|bar], #{a=>1}, <<1:3>>, fun erlang:abs/1, [],
// true}, [{minor_version,2}]) from OTP 25.
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
	want := otpTupleValue()
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("decoded %#v\nwant %#v", v, want)
	}
	b, err := etf.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, otpTuple) {
		t.Fatalf("encoded %v\nwant %v", b, otpTuple)
	}
}
