package etf_test

import (
	"fmt"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
)

// greeting travels as {greeting, From, Text, N}.
type greeting struct {
	From actor.Atom
	Text string
	N    int
}

func init() { etf.MustRegister[greeting]("greeting") }

func ExampleRegister() {
	// An Erlang node receives {greeting, alice, <<"hello">>, 3}.
	b, _ := etf.Marshal(greeting{From: "alice", Text: "hello", N: 3})
	v, _ := etf.Unmarshal(b)
	fmt.Printf("%+v\n", v.(greeting))
	// What Erlang sends as {greeting, bob, "hi", 1} (a charlist) also comes
	// back as a greeting.
	b, _ = etf.Marshal(etf.Tuple{actor.Atom("greeting"), actor.Atom("bob"), []any{104, 105}, 1})
	v, _ = etf.Unmarshal(b)
	fmt.Printf("%+v\n", v.(greeting))
	// Output:
	// {From:alice Text:hello N:3}
	// {From:bob Text:hi N:1}
}
