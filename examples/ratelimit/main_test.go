package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/pool"
	"github.com/colonyrt/colony/supervisor"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// service is one running instance: its System, its pool, its address, an
// HTTP client and the reports written through Config.Logger.
type service struct {
	t      *testing.T
	sys    *actor.System
	pool   *pool.Pool
	addr   string
	client *http.Client
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	logs   []string
}

func startService(t *testing.T, cfg Config) *service {
	t.Helper()
	s := &service{t: t, done: make(chan error, 1),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.QueueLen = max(cfg.QueueLen, 1)
	cfg.LimiterTimeout = time.Second
	cfg.JobTimeout = max(cfg.JobTimeout, 5*time.Second)
	cfg.DrainTimeout = 5 * time.Second
	addrs := make(chan string, 4)
	cfg.OnListen = func(a string) {
		select {
		case addrs <- a:
		default:
		}
	}
	var err error
	s.sys, err = actor.Start(actor.Config{Logger: func(f string, args ...any) {
		s.mu.Lock()
		s.logs = append(s.logs, fmt.Sprintf(f, args...))
		s.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	tree, p, err := spec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.pool = p
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- supervisor.RunSystem(ctx, s.sys, tree, 10*time.Second) }()
	select { // RunSystem says nothing when the tree is up: OnListen does
	case s.addr = <-addrs:
	case err := <-s.done:
		t.Fatal(err)
	}
	return s
}

// stop cancels RunSystem's context, as SIGTERM would, and returns its error.
// The client's idle connections go first: http.Server.Shutdown waits 5 s for
// one that a Transport dialed and never used (StateNew).
func (s *service) stop() error {
	s.client.CloseIdleConnections()
	s.cancel()
	return <-s.done
}

func (s *service) logged(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.logs {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

type reply struct {
	code      int
	body      string
	remaining string
	retry     string
}

// do sends a request for key; ctx may be nil.
func (s *service) do(ctx context.Context, method, key, path string) (reply, error) {
	req, _ := http.NewRequestWithContext(ctx, method, "http://"+s.addr+path, nil)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, string(b), resp.Header.Get("X-RateLimit-Remaining"), resp.Header.Get("Retry-After")}, err
}

func (s *service) must(method, key, path string) reply {
	s.t.Helper()
	r, err := s.do(s.t.Context(), method, key, path)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// stats is GET /v1/stats.
func (s *service) stats() Stats {
	s.t.Helper()
	var st Stats
	if r := s.must("GET", "", "/v1/stats"); r.code != http.StatusOK {
		s.t.Fatalf("/v1/stats: %+v", r)
	} else if err := json.Unmarshal([]byte(r.body), &st); err != nil {
		s.t.Fatal(err)
	}
	return st
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestLimitsPerKeyAndRefill(t *testing.T) {
	const burst, every = 3, 200 * time.Millisecond
	s := startService(t, Config{Burst: burst, RefillEvery: every})
	if r := s.must("POST", "", "/v1/work?n=2"); r.code != http.StatusUnauthorized {
		t.Fatalf("no key: %+v", r)
	}
	// Take tokens until limited: burst of them, plus any refill meanwhile.
	begin, ok := time.Now(), 0
	for {
		r := s.must("POST", "a", "/v1/work?n=2")
		if r.code == http.StatusTooManyRequests {
			if r.retry != "1" || r.remaining != "0" {
				t.Errorf("429 with Retry-After %q, remaining %q", r.retry, r.remaining)
			}
			break
		}
		if r.code != http.StatusOK || !strings.Contains(r.body, `"Value":"4"`) {
			t.Fatalf("request %d: %+v", ok, r)
		}
		if ok++; ok > burst+int(time.Since(begin)/every)+1 {
			t.Fatalf("%d requests allowed in %v with a burst of %d", ok, time.Since(begin), burst)
		}
	}
	if ok < burst {
		t.Fatalf("limited after %d requests, burst %d", ok, burst)
	}
	// Another key has its own full bucket.
	if r := s.must("POST", "b", "/v1/work?n=3"); r.code != http.StatusOK || r.remaining != strconv.Itoa(burst-1) {
		t.Fatalf("key b: %+v", r)
	}
	// A tick gives "a" a token back.
	eventually(t, "a refill", func() bool { return s.must("POST", "a", "/v1/work").code == http.StatusOK })
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentClients(t *testing.T) {
	const burst, every, keys, perKey = 5, 100 * time.Millisecond, 4, 3
	s := startService(t, Config{Burst: burst, RefillEvery: every, Workers: 4, QueueLen: 64})
	var mu sync.Mutex
	allowed, refused, codes := map[string]int{}, map[string]int{}, map[int]int{}
	var wg sync.WaitGroup
	begin := time.Now()
	for k := range keys {
		for range perKey {
			wg.Go(func() {
				key := fmt.Sprint("key", k)
				// 400 ms of load, and on until this key has been limited
				// once (a loaded machine may answer too few requests in
				// 400 ms to spend a burst), for at most 10 s.
				limited := func() bool { mu.Lock(); defer mu.Unlock(); return refused[key] > 0 }
				for el := time.Since(begin); el < 400*time.Millisecond || !limited() && el < 10*time.Second; el = time.Since(begin) {
					r, err := s.do(t.Context(), "POST", key, "/v1/work?n=5&work=1ms")
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					codes[r.code]++
					if r.code == http.StatusOK {
						allowed[key]++
					} else {
						refused[key]++
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(begin)
	if len(codes) != 2 || codes[http.StatusOK] == 0 || codes[http.StatusTooManyRequests] == 0 {
		t.Fatalf("status codes %v, want only 200 and 429", codes)
	}
	for k, n := range allowed {
		if n < burst || n > burst+int(elapsed/every)+1 {
			t.Errorf("%s: %d allowed in %v (burst %d, a token per %v)", k, n, elapsed, burst, every)
		}
	}
	t.Logf("codes %v, allowed per key %v in %v", codes, allowed, elapsed)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// The limiter crashes under load: calls in flight fail (503), and so do calls
// in the moment its name is free; its restart loses every bucket.
func TestLimiterCrash(t *testing.T) {
	const burst = 3
	s := startService(t, Config{Burst: burst, RefillEvery: time.Hour, Workers: 2, QueueLen: 64})
	for range burst {
		s.must("POST", "a", "/v1/work")
	}
	if r := s.must("POST", "a", "/v1/work"); r.code != http.StatusTooManyRequests {
		t.Fatalf("a, exhausted: %+v", r)
	}

	stopLoad := make(chan struct{})
	var mu sync.Mutex
	codes := map[int]int{}
	var requests atomic.Int64 // answered, by any code
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stopLoad:
					return
				default:
				}
				r, err := s.do(t.Context(), "POST", fmt.Sprint("load", g, "-", i%50), "/v1/work?n=1")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				codes[r.code]++
				mu.Unlock()
				requests.Add(1)
				if r.code != http.StatusOK && r.code != http.StatusTooManyRequests &&
					(r.code != http.StatusServiceUnavailable || !strings.HasPrefix(r.body, "limiter: ")) {
					t.Errorf("during the crash: %+v", r)
				}
			}
		})
	}
	// The crash comes under load: once the loaders have had answers.
	eventually(t, "load under way", func() bool { return requests.Load() >= 30 })
	old, _ := s.sys.Whereis(limitsName)
	w, err := s.sys.Monitor(old) // plain Go code learns of the death
	if err != nil {
		t.Fatal(err)
	}
	s.sys.Exit(old, "boom")
	<-w.Done()
	if w.Reason() != "boom" {
		t.Fatalf("limiter exited with %v", w.Reason())
	}
	eventually(t, "the limiter's restart", func() bool {
		p, ok := s.sys.Whereis(limitsName)
		return ok && p != old
	})
	// And goes on against the restarted limiter for a while.
	after := requests.Load()
	eventually(t, "load after the restart", func() bool { return requests.Load() >= after+30 })
	close(stopLoad)
	wg.Wait()
	t.Logf("status codes under load across the crash: %v", codes)

	// Every bucket was lost: "a" has a full burst again.
	if r := s.must("POST", "a", "/v1/work"); r.code != http.StatusOK || r.remaining != strconv.Itoa(burst-1) {
		t.Fatalf("a after the restart: %+v", r)
	}
	eventually(t, "healthz up", func() bool { return s.must("GET", "", "/healthz").code == http.StatusOK })
	if h := s.must("GET", "", "/healthz").body; h != "limiter up: true; restarts: 1\n" || !s.logged("child limits") {
		t.Errorf("healthz %q; supervisor report: %v", h, s.logged("child limits"))
	}
	var st struct {
		Done        uint64
		LateReplies uint64
	}
	if err := json.Unmarshal([]byte(s.must("GET", "", "/v1/stats").body), &st); err != nil || st.Done == 0 {
		t.Errorf("/v1/stats: %+v %v", st, err)
	}

	// Taken down on purpose (supervisor.TerminateChild), the limiter is
	// not restarted: every limited request is a 503 and healthz says so.
	sup, _ := s.sys.Whereis(supName)
	if err := supervisor.TerminateChild(s.sys, sup, "limits"); err != nil {
		t.Fatal(err)
	}
	if r := s.must("POST", "a", "/v1/work"); r.code != http.StatusServiceUnavailable || r.retry != "1" {
		t.Fatalf("limiter down: %+v", r)
	}
	eventually(t, "healthz down", func() bool { return s.must("GET", "", "/healthz").code == http.StatusServiceUnavailable })
	if _, err := supervisor.RestartChild(s.sys, sup, "limits"); err != nil {
		t.Fatal(err)
	}
	if r := s.must("POST", "a", "/v1/work"); r.code != http.StatusOK {
		t.Fatalf("limiter back: %+v", r)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// A worker that crashes fails its own job only (500, not retried); the
// others' jobs finish, and the pool replaces it.
func TestWorkerCrash(t *testing.T) {
	s := startService(t, Config{Burst: 100, RefillEvery: time.Second, Workers: 3, QueueLen: 16})
	var wg sync.WaitGroup
	replies := make([]reply, 6)
	for i := range replies {
		wg.Go(func() {
			q := fmt.Sprintf("/v1/work?n=%d&work=30ms", i)
			if i == 2 {
				q += "&crash=1"
			}
			replies[i] = s.must("POST", "k", q)
		})
	}
	wg.Wait()
	for i, r := range replies {
		if i == 2 {
			if r.code != http.StatusInternalServerError || !strings.Contains(r.body, "worker crashed: actor panicked: job") {
				t.Errorf("crashed job: %+v", r)
			}
		} else if r.code != http.StatusOK || !strings.Contains(r.body, fmt.Sprintf(`"Value":"%d"`, i*i)) {
			t.Errorf("job %d: %+v", i, r)
		}
	}
	eventually(t, "the pool back to 3", func() bool {
		st := s.stats()
		return st.Workers == 3 && st.Idle == 3
	})
	if st := s.stats(); st.Crashed != 1 || st.Done != 5 {
		t.Errorf("stats %+v", st)
	}
	if !s.logged("crash requested") {
		t.Error("no crash report")
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// A job that outlives its timeout is a 504 and its result is dropped (a
// late reply); a client that goes away takes its queued job with it; a full
// queue is a 503.
func TestTimeoutsAndCancel(t *testing.T) {
	s := startService(t, Config{Burst: 100, RefillEvery: time.Second, Workers: 1, QueueLen: 2})
	late := s.sys.Stats().LateReplies
	r := s.must("POST", "k", "/v1/work?n=2&work=200ms&timeout=30ms")
	if r.code != http.StatusGatewayTimeout {
		t.Fatalf("timeout: %+v", r)
	}
	if st := s.stats(); st.Canceled != 1 || st.Done != 0 {
		t.Errorf("after the timeout %+v", st)
	}
	// The worker runs the job to its end, busy until then; its answer is
	// dropped and counted.
	eventually(t, "the late reply", func() bool { return s.sys.Stats().LateReplies > late })
	eventually(t, "the worker free", func() bool { st := s.stats(); return st.Running == 0 && st.Idle == 1 })

	// Occupy the worker, then queue a job whose client goes away.
	busy := make(chan reply)
	// Busy for 1.5 s: the steps below must fit in it, with a loaded
	// machine's margin.
	go func() { busy <- s.must("POST", "k", "/v1/work?n=3&work=1500ms") }()
	eventually(t, "the worker busy", func() bool { return s.stats().Running == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error)
	go func() { _, err := s.do(ctx, "POST", "k", "/v1/work?n=4"); gone <- err }()
	eventually(t, "a job queued", func() bool { return s.stats().Queued == 1 })
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("client: %v", err)
	}
	eventually(t, "the queued job cancelled", func() bool { st := s.stats(); return st.Queued == 0 && st.Canceled == 2 })

	// Fill the queue (2) behind the busy worker: the next is refused.
	queued := make(chan reply, 2)
	for range 2 {
		go func() { queued <- s.must("POST", "k", "/v1/work?n=5") }()
	}
	eventually(t, "a full queue", func() bool { return s.stats().Queued == 2 })
	if r := s.must("POST", "k", "/v1/work?n=6"); r.code != http.StatusServiceUnavailable || !strings.Contains(r.body, "queue full") {
		t.Fatalf("queue full: %+v", r)
	}
	if st := s.stats(); st.Full != 1 {
		t.Errorf("after the queue full %+v", st)
	}
	for _, c := range []chan reply{busy, queued, queued} {
		if r := <-c; r.code != http.StatusOK {
			t.Errorf("queued job: %+v", r)
		}
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// Shutdown stops accepting, lets the request in flight finish (its calls
// still reach the workers), then stops the tree; nothing is left behind.
func TestGracefulShutdown(t *testing.T) {
	s := startService(t, Config{Burst: 10, RefillEvery: 50 * time.Millisecond, Workers: 1, QueueLen: 4})
	inflight := make(chan reply)
	go func() { inflight <- s.must("POST", "k", "/v1/work?n=7&work=300ms") }()
	eventually(t, "the job running", func() bool { return s.stats().Running == 1 })
	stopped := make(chan error)
	go func() { stopped <- s.stop() }()
	eventually(t, "the listener closed", func() bool {
		c, err := net.Dial("tcp", s.addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	if r := <-inflight; r.code != http.StatusOK || !strings.Contains(r.body, `"Value":"49"`) {
		t.Fatalf("in flight at shutdown: %+v", r)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Status(s.sys); !errors.Is(err, actor.ErrNoProc) && !errors.Is(err, actor.ErrStopped) {
		t.Fatalf("pool status after shutdown: %v", err)
	}
	if s.logged("exited") || s.logged("shutdown error") {
		t.Errorf("reports at a clean shutdown: %q", s.logs)
	}
	goleak.VerifyNone(t)
}
