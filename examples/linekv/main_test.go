package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/colonyrt/colony/supervisor"
)

// TestMain fails the package if any test leaves a goroutine behind, a
// second line of defence beside the per-test checks.
func TestMain(m *testing.M) {
	// The runtime opens its own poller's descriptors (an epoll and an
	// eventfd) for the process's first timer or network fd, and never
	// closes them. go test's -timeout alarm is usually that first timer;
	// with -timeout 0 a test's would be, and the fd checks would count
	// the two as leaked. Start the runtime's poller first.
	time.AfterFunc(time.Hour, func() {}).Stop()
	goleak.VerifyTestMain(m)
}

func openFDs(t *testing.T) int {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(des)
}

// run starts a server for one test and checks, at the end, that it shuts
// down cleanly with no goroutine or fd left behind.
// failAfter bounds every wait of these tests for an event (a reply, EOF,
// the server's stop, a count of connections): a bound for failure, not the
// time the event takes. It is generous because a run under -race beside
// other work on two cores is many times slower than a quiet one: 40 clients
// reading 1 MiB each took over 10 s there, and a 10 s deadline failed them.
const failAfter = 2 * time.Minute

func run(t *testing.T, opt Options) *server {
	t.Helper()
	fds := openFDs(t)
	before := goleak.IgnoreCurrent() // made at the cleanup, it would ignore the leaks too
	s, err := start("127.0.0.1:0", opt, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.stop(failAfter); err != nil {
			t.Errorf("stop: %v", err)
		}
		goleak.VerifyNone(t, before)
		if n := openFDs(t); n != fds {
			t.Errorf("%d fds open after stop, %d before", n, fds)
		}
	})
	return s
}

// connsLeft waits until no connection actor is left (every client is
// gone), or says how many are.
func connsLeft(t *testing.T, s *server, within time.Duration) int {
	t.Helper()
	sup, ok := s.sys.Whereis(connsName)
	if !ok {
		t.Fatal("no conns supervisor")
	}
	deadline := time.Now().Add(within)
	for {
		n, err := supervisor.CountChildren(s.sys, sup)
		if err != nil {
			t.Fatal(err)
		}
		if n.Active == 0 || time.Now().After(deadline) {
			return n.Active
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// inKernel returns how many bytes written by the server to the client
// nc are in the kernel: in nc's receive buffer and in the server side's
// send buffer (its tx_queue in /proc/net/tcp), or -1 if it cannot tell.
func inKernel(nc net.Conn) int {
	raw, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		return -1
	}
	inq := -1
	raw.Control(func(fd uintptr) { inq = sockInq(fd) })
	tab, err := os.ReadFile("/proc/net/tcp")
	if inq < 0 || err != nil {
		return -1
	}
	sport := nc.RemoteAddr().(*net.TCPAddr).Port
	cport := nc.LocalAddr().(*net.TCPAddr).Port
	for _, line := range strings.Split(string(tab), "\n")[1:] {
		f := strings.Fields(line) // sl local rem st tx_queue:rx_queue ...
		if len(f) < 5 || !strings.HasSuffix(f[1], fmt.Sprintf(":%04X", sport)) ||
			!strings.HasSuffix(f[2], fmt.Sprintf(":%04X", cport)) {
			continue
		}
		var tx, rx int
		if _, err := fmt.Sscanf(f[4], "%x:%x", &tx, &rx); err != nil {
			return -1
		}
		return inq + tx
	}
	return -1
}

// awaitInKernel waits until want bytes of replies to nc are in the kernel
// (inKernel; while some are in flight they are counted on both sides, so
// the count settles at want from above or below).
func awaitInKernel(t *testing.T, nc net.Conn, want int, who string) {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for {
		got := inKernel(nc)
		if got == want {
			return
		}
		if got < 0 {
			t.Skip("cannot read socket queues (SIOCINQ, /proc/net/tcp)")
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d bytes of replies in the kernel after %v, want %d", who, got, failAfter, want)
		}
		time.Sleep(time.Millisecond)
	}
}

var modes = []struct {
	name string
	opt  Options
}{
	{"active", Options{}},
	{"passive", Options{Passive: true}},
	// A small queue and no high-water mark: slow clients meet
	// ErrBackpressure itself.
	{"backpressure", Options{SendQueueLimit: 64 << 10, HighWater: -1}},
	{"passive-backpressure", Options{Passive: true, SendQueueLimit: 64 << 10, HighWater: -1}},
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// value makes a self-checking value of n+8 bytes: the CRC of the rest, in
// hex, then n random bytes (letters, digits, spaces: SET takes the rest of
// the line).
func value(rng *rand.Rand, n int) string {
	b := make([]byte, 8+n)
	for i := 8; i < len(b); i++ {
		if rng.IntN(16) == 0 {
			b[i] = ' '
		} else {
			b[i] = alnum[rng.IntN(len(alnum))]
		}
	}
	copy(b, fmt.Sprintf("%08x", crc32.ChecksumIEEE(b[8:])))
	return string(b)
}

func wellFormed(v string) bool {
	return len(v) >= 8 && fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(v[8:]))) == v[:8]
}

func valueSize(rng *rand.Rand) int {
	switch r := rng.IntN(1000); {
	case r < 4:
		return 256<<10 + rng.IntN(768<<10) // up to 1 MiB
	case r < 60:
		return 1<<10 + rng.IntN(63<<10)
	default:
		return rng.IntN(100)
	}
}

// step is one command and what its reply must be: want exactly, or, for a
// GET of a key other clients write too (shared), VALUE with a well-formed
// value or NIL; for a DEL of one (want ""), DELETED or NIL.
type step struct {
	cmd    string
	want   string
	shared bool
}

// writeChunked writes b in random pieces, cutting lines anywhere, with
// pauses now and then; errors are returned, not reported (after QUIT the
// server may be gone).
func writeChunked(nc net.Conn, rng *rand.Rand, b []byte) error {
	for len(b) > 0 {
		n := 1 + rng.IntN(min(len(b), []int{3, 100, 4096, 70000}[rng.IntN(4)]))
		if _, err := nc.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if rng.IntN(50) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// check reads the reply of each step and compares it byte for byte.
func check(r *bufio.Reader, steps []step) error {
	for i, st := range steps {
		if st.want == "" { // a DEL of a shared key
			line, err := r.ReadString('\n')
			if err != nil || line != "DELETED\n" && line != "NIL\n" {
				return fmt.Errorf("step %d %.40q: %q %v", i, st.cmd, line, err)
			}
			continue
		}
		if st.shared {
			line, err := r.ReadString('\n')
			if err != nil {
				return fmt.Errorf("step %d %.40q: %v", i, st.cmd, err)
			}
			v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "VALUE ")
			if line != "NIL\n" && (!ok || !wellFormed(v)) {
				return fmt.Errorf("step %d %.40q: bad shared reply %.60q (%d bytes)", i, st.cmd, line, len(line))
			}
			continue
		}
		got := make([]byte, len(st.want))
		if _, err := io.ReadFull(r, got); err != nil {
			return fmt.Errorf("step %d %.40q: %v after %.60q", i, st.cmd, err, got)
		}
		if string(got) != st.want {
			j := 0
			for j < len(got) && got[j] == st.want[j] {
				j++
			}
			return fmt.Errorf("step %d %.40q: reply differs at byte %d of %d: got %.60q, want %.60q",
				i, st.cmd, j, len(got), got[j:], st.want[j:])
		}
	}
	return nil
}

// How a load client ends.
const (
	endClose = iota
	endQuit
	endHalfClose
	endReset
	endMidCommand
	nEnds
)

// loadClient runs one client: a few pipelined batches on its own keys and
// the shared ones, read back (sometimes late), then one of the endings.
func loadClient(addr string, id int, large *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(failAfter))
	r := bufio.NewReader(nc)
	model := map[string]string{}
	key := func() (string, bool) {
		if rng.IntN(5) == 0 {
			return fmt.Sprint("shared.", rng.IntN(4)), true
		}
		return fmt.Sprintf("c%d.k%d", id, rng.IntN(4)), false
	}
	end := id % nEnds
	batches := 1 + rng.IntN(3)
	for b := 0; b < batches; b++ {
		var steps []step
		var out bytes.Buffer
		for range 4 + rng.IntN(16) {
			k, shared := key()
			var st step
			switch op := rng.IntN(10); {
			case op < 4:
				n := valueSize(rng)
				if n > 256<<10 && large.Add(1) > 40 { // bound the run's volume
					n = 100
				}
				v := value(rng, n)
				model[k] = v
				st = step{cmd: "SET " + k + " " + v, want: "OK\n"}
			case op < 8:
				st = step{cmd: "GET " + k, want: "NIL\n", shared: shared}
				if v, ok := model[k]; ok {
					st.want = "VALUE " + v + "\n"
				}
			case op < 9:
				st = step{cmd: "DEL " + k, want: "NIL\n", shared: shared}
				if _, ok := model[k]; ok {
					st.want = "DELETED\n"
				}
				delete(model, k)
			default:
				bad := []string{"FROB x", "", "SET", "GET", "GET a b", "SET onlykey"}[rng.IntN(6)]
				st = step{cmd: bad, want: "ERR unknown command\n"}
				if strings.HasPrefix(bad, "SET") {
					st.want = "ERR usage: SET key value\n"
				} else if strings.HasPrefix(bad, "GET") {
					st.want = "ERR usage: GET key\n"
				}
			}
			if st.shared && strings.HasPrefix(st.cmd, "DEL") {
				st.shared = false // DEL's reply depends on the others: read it as a line
				st.want = ""
			}
			steps = append(steps, st)
			out.WriteString(st.cmd)
			if rng.IntN(4) == 0 {
				out.WriteByte('\r')
			}
			out.WriteByte('\n')
		}
		last := b == batches-1
		if last && end == endQuit {
			steps = append(steps, step{cmd: "QUIT", want: "BYE\n"})
			out.WriteString("QUIT\nGET after.quit\nSET after quit\n")
		}
		werr := make(chan error, 1)
		wrng := rand.New(rand.NewPCG(rng.Uint64(), 8)) // the writer's own
		go func() {
			err := writeChunked(nc, wrng, out.Bytes())
			if err == nil && last && end == endHalfClose {
				err = nc.(*net.TCPConn).CloseWrite()
			}
			werr <- err
		}()
		if rng.IntN(8) == 0 { // a slow client: its replies pile up
			time.Sleep(time.Duration(50+rng.IntN(150)) * time.Millisecond)
		}
		if err := check(r, steps); err != nil {
			return err
		}
		if err := <-werr; err != nil && !(last && end == endQuit) {
			return fmt.Errorf("write: %v", err)
		}
	}
	switch end {
	case endQuit, endHalfClose:
		if b, err := r.ReadByte(); err != io.EOF {
			return fmt.Errorf("after the last reply: %q %v, want EOF", b, err)
		}
	case endReset:
		nc.(*net.TCPConn).SetLinger(0) // RST
	case endMidCommand:
		k, _ := key()
		fmt.Fprintf(nc, "SET %s %s", k, value(rng, 100000)[:50000]) // and close
	}
	return nil
}

func TestLoad(t *testing.T) {
	// 300 clients per mode with COLONY_SOAK set (.ci/run sets it); the
	// README's go test -race ./... runs 100.
	clients := 100
	switch {
	case testing.Short():
		clients = 60
	case os.Getenv("COLONY_SOAK") != "":
		clients = 300
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := run(t, m.opt)
			var large atomic.Int64
			errs := make(chan error, clients)
			var wg sync.WaitGroup
			for id := range clients {
				wg.Go(func() {
					if err := loadClient(s.addr, id, &large); err != nil {
						errs <- fmt.Errorf("client %d (end %d): %w", id, id%nEnds, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			n := 0
			for err := range errs {
				if n++; n <= 10 {
					t.Error(err)
				}
			}
			if n > 10 {
				t.Errorf("... %d clients failed in all", n)
			}
			if left := connsLeft(t, s, failAfter); left != 0 {
				t.Errorf("%d connection actors left after every client has gone", left)
			}
		})
	}
}

// A client that asks for 8 MiB and reads nothing for a while, then QUITs:
// the server stops taking its commands (and stays small), every reply
// arrives in order, then BYE, then EOF.
func TestSlowReaderQuit(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := run(t, m.opt)
			rng := rand.New(rand.NewPCG(1, 2))
			v := value(rng, 1<<20-8)
			nc, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(failAfter))
			var out bytes.Buffer
			steps := []step{{cmd: "SET big", want: "OK\n"}}
			out.WriteString("SET big " + v + "\n")
			for i := range 8 {
				steps = append(steps, step{cmd: "GET big", want: "VALUE " + v + "\n"},
					step{cmd: fmt.Sprint("SET n ", i), want: "OK\n"}, step{cmd: "GET n", want: fmt.Sprintf("VALUE %d\n", i)})
				fmt.Fprintf(&out, "GET big\nSET n %d\nGET n\n", i)
			}
			steps = append(steps, step{cmd: "QUIT", want: "BYE\n"})
			out.WriteString("QUIT\nSET n after\n")
			if _, err := nc.Write(out.Bytes()); err != nil {
				t.Fatal(err)
			}
			// The slow reader itself: it reads nothing for a while, so the
			// server's queue fills and it pauses. What follows holds however
			// far the server got in that time (every reply, in order, BYE,
			// EOF), so the sleep stands for no event.
			time.Sleep(300 * time.Millisecond)
			r := bufio.NewReaderSize(nc, 1<<10)
			if err := check(r, steps); err != nil {
				t.Fatal(err)
			}
			if b, err := r.ReadByte(); err != io.EOF {
				t.Fatalf("after BYE: %q %v, want EOF", b, err)
			}
			// SET n after was not run.
			c2, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			c2.SetDeadline(time.Now().Add(failAfter))
			fmt.Fprint(c2, "GET n\n")
			if err := check(bufio.NewReader(c2), []step{{cmd: "GET n", want: "VALUE 7\n"}}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// QUIT's reply arrives even when the client has sent more after QUIT and
// the reply leaves nothing queued (the close has unread input).
func TestQuitWithTrailingInput(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := run(t, m.opt)
			var wg sync.WaitGroup
			var bad atomic.Int64
			for i := range 50 {
				wg.Go(func() {
					nc, err := net.Dial("tcp", s.addr)
					if err != nil {
						t.Error(err)
						return
					}
					defer nc.Close()
					nc.SetDeadline(time.Now().Add(failAfter))
					fmt.Fprintf(nc, "SET q%d x\nQUIT\n", i)
					time.Sleep(time.Millisecond)
					nc.Write(bytes.Repeat([]byte("GET q\n"), 10000)) // may fail: the server closed
					got, err := io.ReadAll(nc)
					if string(got) != "OK\nBYE\n" || err != nil {
						bad.Add(1)
						t.Logf("client %d: %q, %v", i, got, err)
					}
				})
			}
			wg.Wait()
			if n := bad.Load(); n > 0 {
				t.Errorf("%d of 50 clients lost QUIT's reply or its EOF", n)
			}
		})
	}
}

// A line past maxLine is refused and the connection closed.
func TestLineTooLong(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := run(t, m.opt)
			nc, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(failAfter))
			go func() {
				nc.Write([]byte("GET x\nSET k "))
				nc.Write(bytes.Repeat([]byte("y"), maxLine+1))
			}()
			r := bufio.NewReader(nc)
			if err := check(r, []step{{cmd: "GET x", want: "NIL\n"}, {cmd: "SET k yyy...", want: "ERR line too long\n"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.ReadByte(); err == nil {
				t.Fatal("connection still open")
			}
		})
	}
}

// Shutdown with clients connected, some mid-command, some with replies
// queued: it returns in time, each client reads what it was answered and
// then the end of the stream, and nothing is left (run's cleanup).
func TestShutdownWithClients(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := run(t, m.opt)
			rng := rand.New(rand.NewPCG(3, 4))
			v := value(rng, 512<<10)
			seed, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(seed, "SET big %s\nQUIT\n", v)
			if got, err := io.ReadAll(seed); string(got) != "OK\nBYE\n" {
				t.Fatalf("seed: %q %v", got, err)
			}
			seed.Close()
			type cl struct {
				nc    net.Conn
				steps []step
			}
			var cls []cl
			for i := range 40 {
				nc, err := net.Dial("tcp", s.addr)
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(failAfter))
				var steps []step
				switch i % 3 {
				case 0: // idle
				case 1: // mid-command
					fmt.Fprint(nc, "SET half ", v[:1000])
				case 2: // answered, not read
					fmt.Fprint(nc, "GET big\nGET big\n")
					steps = []step{{cmd: "GET big", want: "VALUE " + v + "\n"}, {cmd: "GET big", want: "VALUE " + v + "\n"}}
				}
				cls = append(cls, cl{nc, steps})
			}
			// Stop only once the server has answered both GETs of every
			// reading client and handed the replies to the kernel (they
			// sit in the client's receive buffer and the server's send
			// buffer): stopped earlier, it would close a socket with the
			// GETs unread (the kernel resets it) or with a reply still
			// held back by its own backpressure.
			for i, c := range cls {
				want := 0
				for _, st := range c.steps {
					want += len(st.want)
				}
				if want > 0 {
					awaitInKernel(t, c.nc, want, fmt.Sprint("client ", i))
				}
			}
			done := make(chan error, 1)
			go func() { done <- s.stop(failAfter) }()
			for i, c := range cls {
				r := bufio.NewReader(c.nc)
				if err := check(r, c.steps); err != nil {
					t.Errorf("client %d: %v", i, err)
					continue
				}
				if b, err := r.ReadByte(); err != io.EOF && !errors.Is(err, net.ErrClosed) && i%3 != 1 {
					t.Errorf("client %d: after its replies: %q %v, want EOF", i, b, err)
				}
			}
			if err := <-done; err != nil {
				t.Errorf("stop: %v", err)
			}
		})
	}
}
