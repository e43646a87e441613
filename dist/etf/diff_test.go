package etf_test

import (
	"errors"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/internal/testsys"
	"pgregory.net/rapid"
)

// TestOTPDifferential: random terms encoded by Colony are decoded by
// binary_to_term in a real Erlang node and re-encoded by term_to_binary,
// and those bytes decode back to values equal to the originals. One node
// serves the whole test (otp.escript echo).
func TestOTPDifferential(t *testing.T) {
	e := startEcho(t)
	if _, err := e.roundTrip([]byte{131, 1}); !errors.Is(err, errOTPRefused) {
		t.Fatalf("the echo node took a term of unknown tag: %v", err)
	}
	sys := testsys.Start(t, actor.Config{})
	node := etf.Node{Name: "colony@127.0.0.1", Creation: 0x5eed, Sys: sys}
	enc := etf.Encoder{Node: node}
	dec := etf.Decoder{Node: node}
	g := &termGen{sys: sys, self: node, funs: [][]byte{testFun(), testFun([]byte{97, 1}, []byte{106})}, maxDepth: 4}
	rapid.Check(t, func(t *rapid.T) {
		v := g.term(t, 0)
		b, err := enc.AppendVersioned(nil, v)
		if err != nil {
			t.Fatalf("encode %#v: %v", v, err)
		}
		back, err := e.roundTrip(b)
		if err != nil {
			t.Fatalf("%#v as %v: %v", v, b, err)
		}
		got, n, err := dec.DecodeVersioned(back)
		if err != nil || n != len(back) {
			t.Fatalf("decode OTP's %v (%d bytes used): %v", back, n, err)
		}
		if !termEqual(got, v) {
			t.Fatalf("through OTP:\n got %#v\nwant %#v", got, v)
		}
	})
}
