package dist_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// sysQuiet is a Server that hands what reaches HandleInfo to a channel.
type sysQuiet struct {
	actor.ServerBase
	info chan any
}

func (s *sysQuiet) HandleInfo(c *actor.Context, m any) { s.info <- m }

// A peer's malformed or out-of-bounds system messages get the answers of
// requests not understood, never a panic, never a log sized by the peer's
// number; one with no From to answer is dropped, and none reaches the
// server's callbacks.
func TestBadSystemMessagesFromAPeer(t *testing.T) {
	port := testEPMD(t)
	a := startNode(t, port, dist.Config{})
	b := startNode(t, port, dist.Config{})
	srv := &sysQuiet{info: make(chan any, 8)}
	if _, err := actor.StartServer(b.sys, srv, actor.WithSpawn(actor.Name("q"))); err != nil {
		t.Fatal(err)
	}
	me, inbox := spawnCollector(t, a.sys, 8)
	system := actor.Atom("system")
	tag := a.MakeRef()
	from := etf.Tuple{me, tag}
	for _, c := range []struct {
		req  any
		want string
	}{
		{etf.Tuple{actor.Atom("debug"), etf.Tuple{actor.Atom("log"), etf.Tuple{true, 1 << 40}}}, "unknown_debug"},
		{etf.Tuple{actor.Atom("debug"), etf.Tuple{actor.Atom("log_to_file"), "/tmp/x"}}, "unknown_debug"},
		{etf.Tuple{actor.Atom("terminate")}, "{error {unknown_system_msg {terminate}}}"},
		{actor.Atom("get_state_please"), "{error {unknown_system_msg get_state_please}}"},
	} {
		if err := a.SendName(me, "q", b.Name(), etf.Tuple{system, from, c.req}); err != nil {
			t.Fatal(err)
		}
		got, ok := recv(t, inbox, 10*time.Second).(etf.Tuple)
		if !ok || len(got) != 2 || got[0] != tag {
			t.Fatalf("%v: answered %#v", c.req, got)
		}
		if s := termText(got[1]); s != c.want {
			t.Fatalf("%v: answered %s, want %s", c.req, s, c.want)
		}
	}
	// No From to answer: dropped, not handed to HandleInfo.
	a.SendName(me, "q", b.Name(), etf.Tuple{system, actor.Atom("nofrom"), actor.Atom("get_state")})
	a.SendName(me, "q", b.Name(), "after")
	if m := recv(t, srv.info, 10*time.Second); m != "after" {
		t.Fatalf("HandleInfo got %#v", m)
	}
}

// termText prints a term compactly for comparison.
func termText(v any) string {
	switch x := v.(type) {
	case etf.Tuple:
		s := "{"
		for i, e := range x {
			if i > 0 {
				s += " "
			}
			s += termText(e)
		}
		return s + "}"
	case actor.Atom:
		return string(x)
	}
	if t, ok := v.([]any); ok && len(t) == 1 {
		return "[" + termText(t[0]) + "]"
	}
	return "?"
}
