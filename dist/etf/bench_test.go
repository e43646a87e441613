package etf_test

import (
	"runtime"
	"testing"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// typicalMessage is a gen_server call as it crosses the wire: the SEND
// control tuple's payload {'$gen_call', {From, [alias | Ref]}, Request}, as
// OTP 25's gen:call sends it.
func typicalMessage(b *testing.B) any {
	from := remote(b, "client@127.0.0.1", 3, 85, 0)
	to := etf.Ref{Node: "client@127.0.0.1", Creation: 3, Len: 3, Words: [5]uint32{1, 2, 3}}
	return etf.Tuple{actor.Atom("$gen_call"), etf.Tuple{from, etf.ImproperList{Elems: []any{actor.Atom("alias")}, Tail: to}},
		etf.Tuple{actor.Atom("echo"), "hello, world", 42, []any{actor.Atom("a"), actor.Atom("b"), 3.5}}}
}

func BenchmarkEncode(b *testing.B) {
	v := typicalMessage(b)
	var e etf.Encoder
	buf, _ := e.Append(nil, v)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = e.Append(buf[:0], v)
	}
}

func BenchmarkDecode(b *testing.B) {
	v := typicalMessage(b)
	var e etf.Encoder
	buf, _ := e.Append(nil, v)
	var d etf.Decoder
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeRegistered(b *testing.B) {
	v := envelope{To: remote(b, "a@127.0.0.1", 1, 2, 3), Ref: etf.Ref{Node: "a@127.0.0.1", Len: 3},
		Body: actor.Atom("ping"), Tags: []actor.Atom{"x"}, Data: []byte("payload"), Name: "n", Meta: map[string]int{"k": 1}}
	var e etf.Encoder
	buf, _ := e.Append(nil, v)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = e.Append(buf[:0], v)
	}
}

func BenchmarkDecodeRegistered(b *testing.B) {
	v := envelope{To: remote(b, "a@127.0.0.1", 1, 2, 3), Ref: etf.Ref{Node: "a@127.0.0.1", Len: 3},
		Body: actor.Atom("ping"), Tags: []actor.Atom{"x"}, Data: []byte("payload"), Name: "n", Meta: map[string]int{"k": 1}}
	buf, _ := (&etf.Encoder{}).Append(nil, v)
	var d etf.Decoder
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeBinary1MiB(b *testing.B) {
	buf, _ := (&etf.Encoder{}).Append(nil, make([]byte, 1<<20))
	var d etf.Decoder
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeRemotePid and BenchmarkDecodeRemotePid are a pid alone,
// so that the node identity table's share of the codec shows.
func BenchmarkEncodeRemotePid(b *testing.B) {
	v := remote(b, "client@127.0.0.1", 3, 85, 0)
	var e etf.Encoder
	buf, _ := e.Append(nil, v)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = e.Append(buf[:0], v)
	}
}

func BenchmarkDecodeRemotePid(b *testing.B) {
	v := remote(b, "client@127.0.0.1", 3, 85, 0)
	buf, _ := (&etf.Encoder{}).Append(nil, v)
	var d etf.Decoder
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
	runtime.KeepAlive(v)
}
