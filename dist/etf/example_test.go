package etf_test

import (
	"fmt"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

func ExampleMarshal() {
	b, err := etf.Marshal(etf.Tuple{actor.Atom("ok"), 42, "hi", []any{1, 2}})
	if err != nil {
		panic(err)
	}
	fmt.Println(b) // term_to_binary({ok, 42, <<"hi">>, [1, 2]})
	v, err := etf.Unmarshal(b)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%#v\n", v)
	// Output:
	// [131 104 4 119 2 111 107 97 42 109 0 0 0 2 104 105 107 0 2 1 2]
	// etf.Tuple{"ok", 42, "hi", []interface {}{1, 2}}
}

func ExampleDecoder() {
	// A pid of another node decodes to a remote actor.Pid; the same bytes
	// always decode to the same (==) Pid.
	b := append([]byte{131, 88, 119, 13}, "erl@127.0.0.1"...)
	b = append(b, 0, 0, 0, 85, 0, 0, 0, 0, 0, 0, 0, 2) // ID 85, Serial 0, Creation 2
	var d etf.Decoder
	v, n, err := d.DecodeVersioned(b)
	if err != nil {
		panic(err)
	}
	id, _ := v.(actor.Pid).Remote()
	fmt.Println(n, id)
	// Output:
	// 29 {erl@127.0.0.1 2 85 0}
}
