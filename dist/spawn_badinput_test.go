package dist_test

import (
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// Spawn requests and replies of the wrong shape close the connection they
// came on, as any malformed control message does; a well-formed request for
// nothing registered starts a process that dies of undef, and the
// connection stays up.
func TestBadSpawnInput(t *testing.T) {
	n, good := badInputNodes(t, dist.Config{})
	registerWorker(t, n)
	termEnc = n.Encoder()
	from, err := actor.RemotePid(actor.RemoteID{Node: "evil@127.0.0.1", Creation: 7, ID: 1})
	if err != nil {
		t.Fatal(err)
	}
	ref := etf.Ref{Node: "evil@127.0.0.1", Creation: 7, Len: 3, Words: [5]uint32{1, 2, 3}}
	req := func(mfa any, opts any) etf.Tuple { return etf.Tuple{29, ref, from, from, mfa, opts} }
	mfa := etf.Tuple{actor.Atom("colony"), actor.Atom("worker"), 1}
	cases := []struct {
		what, log string
		frames    []byte
	}{
		{"MFA not a tuple", "malformed SPAWN_REQUEST",
			frame([]byte{112}, term(t, req(actor.Atom("worker"), []any{})), term(t, []any{from}))},
		{"arity not the arguments'", "malformed SPAWN_REQUEST {M, F, Arity}",
			frame([]byte{112}, term(t, req(etf.Tuple{actor.Atom("colony"), actor.Atom("worker"), 2}, []any{})), term(t, []any{from}))},
		{"arguments not a list", "malformed SPAWN_REQUEST {M, F, Arity}",
			frame([]byte{112}, term(t, req(mfa, []any{})), term(t, actor.Atom("args")))},
		{"no arguments", "malformed SPAWN_REQUEST",
			frame([]byte{112}, term(t, req(mfa, []any{})))},
		{"request of the wrong arity", "control message 29 of arity 5, want 6",
			frame([]byte{112}, term(t, etf.Tuple{29, ref, from, from, mfa}), term(t, []any{from}))},
		{"reply without a reference", "malformed SPAWN_REPLY",
			frame([]byte{112}, term(t, etf.Tuple{31, 42, from, 0, actor.Atom("badarg")}))},
	}
	for _, tc := range cases {
		c := handshaken(t, n)
		c.Write(tc.frames)
		closedByNode(t, c)
		eventually(t, 5*time.Second, tc.what+": log line "+tc.log, func() bool { return n.logs.has(tc.log) })
	}

	// Well-formed, nothing registered (a process that dies of undef), a
	// malformed option list (refused): the connection kept.
	c := handshaken(t, n)
	c.Write(frame([]byte{112}, term(t, req(etf.Tuple{actor.Atom("colony"), actor.Atom("nosuch"), 1}, []any{})), term(t, []any{from})))
	eventually(t, 5*time.Second, "the refusal logged", func() bool { return n.logs.has("colony:nosuch/1, which is not registered") })
	c.Write(frame([]byte{112}, term(t, req(mfa, actor.Atom("notalist"))), term(t, []any{from})))
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			if ne, ok := err.(interface{ Timeout() bool }); !ok || !ne.Timeout() {
				t.Fatalf("the node closed the connection after a refused request: %v", err)
			}
			break
		}
	}
	stillWorks(t, n, good)
}
