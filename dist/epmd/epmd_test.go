package epmd

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/colonyrt/colony/dist/internal/erltest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func serve(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := Serve(l)
	t.Cleanup(func() { s.Close() })
	return l.Addr().String()
}

func node(name string, port uint16) Node {
	return Node{Name: name, Port: port, Type: NodeTypeNormal, Protocol: ProtocolTCP, High: HighVersion, Low: LowVersion}
}

// exercise registers, looks up, lists and unregisters against the epmd at
// addr: the same checks for the in-process Server and the real epmd.
func exercise(t *testing.T, addr string) {
	r, err := Register(ctx(t), addr, node("alpha", 4711))
	if err != nil {
		t.Fatal(err)
	}
	if r.Creation == 0 {
		t.Errorf("creation 0")
	}
	if _, err := Register(ctx(t), addr, node("alpha", 4712)); !errors.Is(err, ErrTaken) {
		t.Errorf("second registration: %v, want ErrTaken", err)
	}
	got, err := Lookup(ctx(t), addr, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if got.Port != 4711 || got.Name != "alpha" || got.High != HighVersion || got.Low != LowVersion || got.Type != NodeTypeNormal {
		t.Errorf("lookup: %+v", got)
	}
	names, err := Names(ctx(t), addr)
	if err != nil || names["alpha"] != 4711 {
		t.Errorf("names %v %v", names, err)
	}
	if _, err := Lookup(ctx(t), addr, "beta"); !errors.Is(err, ErrNotFound) {
		t.Errorf("lookup of nobody: %v", err)
	}
	r.Close()
	<-r.Done()
	// epmd notices the close in its own time: poll.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := Lookup(ctx(t), addr, "alpha")
		if errors.Is(err, ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alpha still registered after Close: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	r2, err := Register(ctx(t), addr, node("alpha", 4713))
	if err != nil {
		t.Fatalf("register after unregister: %v", err)
	}
	if r2.Creation == r.Creation {
		t.Errorf("a new registration kept creation %d", r.Creation)
	}
	r2.Close()
	<-r2.Done()
}

func TestServer(t *testing.T) { exercise(t, serve(t)) }

func TestRealEPMD(t *testing.T) {
	port := erltest.EPMD(t)
	exercise(t, "127.0.0.1:"+strconv.Itoa(port))
}

func TestServerBadInput(t *testing.T) {
	addr := serve(t)
	send := func(b []byte) []byte {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write(b)
		out, _ := io.ReadAll(c)
		return out
	}
	for what, in := range map[string][]byte{
		"huge length":   {0xff, 0xff, alive2Req},
		"zero length":   {0, 0},
		"kill":          {0, 1, killReq},
		"stop":          append([]byte{0, 6, stopReq}, "alpha"...),
		"garbage":       {0, 4, 1, 2, 3, 4},
		"short alive2":  {0, 3, alive2Req, 1, 2},
		"name too long": append(binary.BigEndian.AppendUint16([]byte{0x7f, 0xff, alive2Req, 0, 1, 77, 0, 0, 6, 0, 5}, 0xffff), make([]byte, 100)...),
	} {
		if out := send(in); len(out) != 0 {
			t.Errorf("%s: answered % x", what, out)
		}
	}
	// The server still works.
	r, err := Register(ctx(t), addr, node("gamma", 1))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	<-r.Done()
}

func TestClientBadReplies(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	replies := [][]byte{
		{port2Resp, 0, 0, 1, 77, 0, 0, 6, 0, 5, 0xff, 0xff}, // name length past the bound
		{port2Resp, 0, 0, 1}, // truncated
		{99},                 // unknown reply
	}
	go func() {
		for _, r := range replies {
			c, err := l.Accept()
			if err != nil {
				return
			}
			readRequest(c)
			c.Write(r)
			c.Close()
		}
	}()
	for i := range replies {
		if _, err := Lookup(ctx(t), l.Addr().String(), "x"); !errors.Is(err, ErrProtocol) {
			t.Errorf("reply %d: %v, want ErrProtocol", i, err)
		}
	}
}
