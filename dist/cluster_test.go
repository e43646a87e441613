package dist_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
)

// seedCfg is a Config whose seed retries are quick, for the cluster tests.
func seedCfg(name string, seeds ...actor.Atom) dist.Config {
	return dist.Config{Name: name, Seeds: seeds, SeedRetryMin: 5 * time.Millisecond,
		SeedRetryMax: 40 * time.Millisecond, HandshakeTimeout: 3 * time.Second}
}

func hasNode(n *dist.Node, peer actor.Atom) bool { return slices.Contains(n.Nodes(), peer) }

// A node given a seed that is not up yet keeps trying, connects when the
// seed starts, and connects again when the seed restarts (a new
// incarnation under the same name) after it stopped.
func TestSeedsConnectAndReconnect(t *testing.T) {
	port := testEPMD(t)
	bName := uniqueName("seedb")
	a := startNode(t, port, seedCfg(uniqueName("seeda"), actor.Atom(bName)))
	if got := a.Seeds(); len(got) != 1 || got[0] != actor.Atom(bName) {
		t.Fatalf("Seeds() = %v", got)
	}
	if len(a.Nodes()) != 0 {
		t.Fatalf("Nodes() = %v before the seed runs", a.Nodes())
	}
	eventually(t, 10*time.Second, "the keeper to fail a few times", func() bool {
		return a.logs.has("seed " + bName + " not reachable")
	})

	if a.logs.has("WARN dist: handshake to " + bName) {
		t.Errorf("a seed that is down was logged as a failed handshake:\n%s", a.logs)
	}

	b := startNode(t, port, dist.Config{Name: bName})
	eventually(t, 10*time.Second, "a to connect to its seed", func() bool { return hasNode(a.Node, b.Name()) })
	// b's side of the handshake may end a moment after a's.
	eventually(t, 10*time.Second, "b to see a", func() bool { return hasNode(b.Node, a.Name()) })
	if !a.Connected(b.Name()) || a.Connected("nobody@127.0.0.1") {
		t.Errorf("Connected: %v to b, %v to nobody", a.Connected(b.Name()), a.Connected("nobody@127.0.0.1"))
	}

	// b stops; a's membership drops it, and b's next incarnation is
	// connected again without anyone sending to it.
	creation := b.Creation()
	if err := b.Stop(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "a to see b down", func() bool { return !hasNode(a.Node, b.Name()) })
	b2 := startNode(t, port, dist.Config{Name: bName})
	if b2.Creation() == creation {
		t.Logf("b's creation did not change (%d)", creation)
	}
	eventually(t, 10*time.Second, "a to reconnect to b's next incarnation", func() bool {
		return hasNode(a.Node, b2.Name()) && hasNode(b2.Node, a.Name())
	})
}

// Three nodes given one seed list, their own names included, form a full
// mesh whatever order they start in.
func TestSeedsFormMesh(t *testing.T) {
	port := testEPMD(t)
	names := []actor.Atom{actor.Atom(uniqueName("mesh")), actor.Atom(uniqueName("mesh")), actor.Atom(uniqueName("mesh"))}
	var nodes []*testNode
	for i := len(names) - 1; i >= 0; i-- {
		nodes = append(nodes, startNode(t, port, seedCfg(string(names[i]), names...)))
	}
	for _, n := range nodes {
		if got := n.Seeds(); len(got) != 2 || slices.Contains(got, n.Name()) {
			t.Errorf("%s: Seeds() = %v, want the other two", n.Name(), got)
		}
	}
	eventually(t, 10*time.Second, "a full mesh", func() bool {
		for _, n := range nodes {
			if len(n.Nodes()) != 2 {
				return false
			}
		}
		return true
	})
}

// stubResolver answers LookupHost and LookupSRV from its fields.
type stubResolver struct {
	mu      sync.Mutex
	hosts   map[string][]string
	srv     map[string][]*net.SRV
	err     error
	lookups int
}

func (r *stubResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	if r.err != nil {
		return nil, r.err
	}
	if a, ok := r.hosts[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (r *stubResolver) LookupSRV(_ context.Context, service, proto, name string) (string, []*net.SRV, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	if service != "" || proto != "" {
		return "", nil, errors.New("stub: only full SRV names")
	}
	if r.err != nil {
		return "", nil, r.err
	}
	if s, ok := r.srv[name]; ok {
		return name, s, nil
	}
	return "", nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

func (r *stubResolver) set(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
}

func (r *stubResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups
}

// A DNS seed's addresses (A records) and targets (SRV records) become
// seeds Alive@host; names that vanish from DNS stop being kept, answers
// that are no node name are skipped, and a failed lookup keeps the last
// answer.
func TestDNSSeed(t *testing.T) {
	port := testEPMD(t)
	for _, srv := range []bool{false, true} {
		name := "A"
		if srv {
			name = "SRV"
		}
		t.Run(name, func(t *testing.T) {
			bName := uniqueName("dnsb")
			alive, _, _ := strings.Cut(bName, "@")
			b := startNode(t, port, dist.Config{Name: bName})
			r := &stubResolver{
				hosts: map[string][]string{"app.svc.test": {"127.0.0.1", "bad@host", "127.0.0.1"}},
				srv: map[string][]*net.SRV{"_dist._tcp.app.svc.test": {
					{Target: "127.0.0.1.", Port: 4369}, {Target: "", Port: 1}, nil}},
			}
			cfg := seedCfg(uniqueName("dnsa"))
			cfg.DNSSeed = dist.DNSSeed{Name: "app.svc.test", Alive: alive, Resolver: r, Refresh: 10 * time.Millisecond}
			if srv {
				cfg.DNSSeed.Name, cfg.DNSSeed.SRV = "_dist._tcp.app.svc.test", true
			}
			a := startNode(t, port, cfg)
			eventually(t, 10*time.Second, "a to connect to the node DNS names", func() bool { return hasNode(a.Node, b.Name()) })
			if got := a.Seeds(); len(got) != 1 || got[0] != b.Name() {
				t.Errorf("Seeds() = %v, want [%s]", got, b.Name())
			}
			if !a.logs.has("is no node name") {
				t.Errorf("the bad answer was not logged:\n%s", a.logs)
			}

			// A failing lookup keeps the seed.
			r.set(func() { r.err = errors.New("stub: SERVFAIL") })
			k := r.count()
			eventually(t, 10*time.Second, "two failed lookups", func() bool { return r.count() >= k+2 })
			if got := a.Seeds(); len(got) != 1 {
				t.Errorf("Seeds() = %v after failed lookups, want b kept", got)
			}
			// An answer without b stops its keeper; the connection stays.
			r.set(func() {
				r.err = nil
				r.hosts = map[string][]string{"app.svc.test": {}}
				r.srv = map[string][]*net.SRV{"_dist._tcp.app.svc.test": {}}
			})
			eventually(t, 10*time.Second, "b to leave the seeds", func() bool { return len(a.Seeds()) == 0 })
			if !hasNode(a.Node, b.Name()) {
				t.Errorf("the connection to b was closed when DNS stopped naming it")
			}
		})
	}
}

func TestSeedConfigErrors(t *testing.T) {
	port := testEPMD(t)
	for _, tc := range []struct {
		what string
		cfg  dist.Config
	}{
		{"bad seed name", dist.Config{Seeds: []actor.Atom{"noat"}}},
		{"negative retry", dist.Config{SeedRetryMin: -1}},
		{"max below min", dist.Config{SeedRetryMin: time.Second, SeedRetryMax: time.Millisecond}},
		{"DNS seed without a name", dist.Config{DNSSeed: dist.DNSSeed{SRV: true}}},
		{"DNS alive with @", dist.Config{DNSSeed: dist.DNSSeed{Name: "x", Alive: "a@b"}}},
		{"too many seeds", dist.Config{Seeds: make([]actor.Atom, dist.MaxSeeds+1)}},
	} {
		sys, err := actor.Start(actor.Config{})
		if err != nil {
			t.Fatal(err)
		}
		tc.cfg.Name, tc.cfg.Cookie, tc.cfg.EPMDPort = uniqueName("bad"), "c", port
		if _, err := dist.Start(sys, tc.cfg); !errors.Is(err, dist.ErrBadConfig) {
			t.Errorf("%s: Start = %v, want ErrBadConfig", tc.what, err)
		}
		sys.Shutdown(context.Background())
	}
}
