//go:build linux

package dist_test

// The memory a node needs to receive one large message, measured as the
// peak resident set (VmHWM) of a node that runs alone in a child process
// (this test binary run again), fed by a raw peer in the test.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
	"github.com/colonyrt/colony/dist/handshake"
	"github.com/colonyrt/colony/internal/testsys"
)

const rssMessage = 60_000_000 // the binary's bytes: a frame of 60 MB

// TestLargeMessageRSS: a node that receives a REG_SEND of a 60 MB binary,
// as one frame and as OTP sends it (fragments of 64 KiB), peaks at most at
// 1.5 times the message above its resident set before it.
func TestLargeMessageRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("a child process and 60 MB: not with -short")
	}
	if raceEnabled {
		// The race detector shadows every byte the heap maps, so the
		// child's RSS is several times the message whatever the node
		// does; .ci/run runs this test without -race.
		t.Skip("RSS with the race detector's shadow memory says nothing of the node's")
	}
	for _, mode := range []string{"frame", "fragments"} {
		t.Run(mode, func(t *testing.T) {
			base, hwm := rssOfOneMessage(t, mode)
			growth := float64(hwm-base) / rssMessage
			t.Logf("%s: VmRSS before %d MiB, VmHWM %d MiB: %.2f times the message above the base, %.2f in all",
				mode, base>>20, hwm>>20, growth, float64(hwm)/rssMessage)
			if growth > 1.5 {
				t.Errorf("%s: the node's peak grew by %.2f times the message, want at most 1.5", mode, growth)
			}
		})
	}
}

// rssOfOneMessage runs the child node, sends it the message in mode, and
// returns the child's VmRSS before the message and its VmHWM after, in
// bytes.
func rssOfOneMessage(t *testing.T, mode string) (base, hwm int) {
	name := uniqueName("rss")
	cmd := exec.Command(os.Args[0], "-test.run=^TestRSSChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "COLONY_RSS_CHILD="+name, "GOGC=100", "GOMEMLIMIT=off")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer func() { <-done }()
	lines := make(chan string, 16)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		cmd.Wait()
	}()
	defer cmd.Process.Kill()
	field := func(prefix string) []string {
		timeout := time.After(60 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the child ended without %q", prefix)
				}
				if rest, ok := strings.CutPrefix(l, prefix); ok {
					return strings.Fields(rest)
				}
			case <-timeout:
				t.Fatalf("no %q from the child within 60 s", prefix)
			}
		}
	}
	addr := field("addr ")[0]
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := &handshake.Config{Name: uniqueName("peer"), Creation: 7, Cookie: "cookie",
		Flags: handshake.Mandatory | handshake.Published | handshake.Fragments}
	if _, err := handshake.Dial(c, cfg, name, nil); err != nil {
		t.Fatal(err)
	}
	from, _ := actor.RemotePid(actor.RemoteID{Node: actor.Atom(cfg.Name), Creation: 7, ID: 1})
	ctl, _ := etf.Marshal(etf.Tuple{6, from, actor.Atom(""), actor.Atom("sink")})
	msg, _ := etf.Marshal(string(make([]byte, rssMessage)))
	payload := append(ctl[1:], msg[1:]...)
	w := bufio.NewWriterSize(c, 1<<20)
	switch mode {
	case "frame":
		w.Write(binary.BigEndian.AppendUint32(nil, uint32(3+len(payload))))
		w.Write([]byte{131, 68, 0})
		w.Write(payload)
	case "fragments":
		rawFragments(1, payload, 64<<10, func(h, chunk []byte) {
			w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(chunk))))
			w.Write(h)
			w.Write(chunk)
		})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r := field("result ")
	base, _ = strconv.Atoi(r[0])
	hwm, _ = strconv.Atoi(r[1])
	if got, _ := strconv.Atoi(r[2]); got != rssMessage {
		t.Fatalf("the child got a binary of %d bytes", got)
	}
	return base, hwm
}

// TestRSSChild is the node of TestLargeMessageRSS, run in a child process.
func TestRSSChild(t *testing.T) {
	name := os.Getenv("COLONY_RSS_CHILD")
	if name == "" {
		t.Skip("the child of TestLargeMessageRSS")
	}
	sys := testsys.Start(t, actor.Config{})
	got := make(chan int, 1)
	if _, err := sys.Spawn(actor.ActorFunc(func(_ *actor.Context, msg any) {
		if s, ok := msg.(string); ok {
			got <- len(s)
		}
	}), actor.Name("sink")); err != nil {
		t.Fatal(err)
	}
	n, err := dist.Start(sys, dist.Config{Name: name, Cookie: "cookie", EPMD: dist.EPMDNone, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	base := procStatus(t, "VmRSS")
	fmt.Printf("addr %s\n", n.Addr())
	select {
	case l := <-got:
		fmt.Printf("result %d %d %d\n", base, procStatus(t, "VmHWM"), l)
	case <-time.After(60 * time.Second):
		t.Fatal("no message within 60 s")
	}
}

// procStatus returns a field of /proc/self/status in bytes.
func procStatus(t *testing.T, key string) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", key)
	return 0
}
