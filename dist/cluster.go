package dist

// Cluster membership: seeds.
//
// Problem. Erlang forms a cluster by connecting on first use (a send, a
// ping) and, with global's connect_all, by meshing the nodes of every new
// connection. A Colony service also wants to join its cluster at start and
// to stay in it: a node that restarts, or a seed that starts after this
// node, should be connected without anyone sending to it first.
//
// Approaches rejected. A membership protocol of our own (gossip, a
// coordinator) would not be understood by Erlang nodes and would duplicate
// what the distribution connections already say: who is up is who is
// connected. Running global's meshing would need global's name server
// protocol, which Colony does not speak.
//
// Protocol chosen. Membership is the set of connected visible nodes
// (Nodes). Config.Seeds and Config.DNSSeed name nodes to keep connected:
// a seed keeper goroutine per seed dials it (Connect; first it asks the
// seed's EPMD whether the seed runs, so that a seed that is down costs a
// lookup and no warning in the log), and while that fails waits a backoff
// delay (package backoff, between SeedRetryMin and
// SeedRetryMax, with jitter so that a restarted seed is not met by every
// node at once) and dials again; once connected it waits for that
// connection's end (the peer record's done channel) and starts over. A DNS
// seed is resolved at Start and every Refresh by one resolver goroutine,
// which starts keepers for names that appear; a keeper whose name vanished
// from DNS stops trying (its connection, if up, is left alone). Both
// directions may dial at once; the handshake's simultaneous-connect rule
// (decide, in node.go) keeps one connection.
//
// Membership is not transitive: a node connects to its seeds, and to the
// nodes that connect to it, and to nodes it sends to. Give every node the
// same seed list to get a full mesh.
//
// All the goroutines are the node's (goHelper) and end when it stops.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/backoff"
	"github.com/colonyrt/colony/dist/epmd"
	"github.com/colonyrt/colony/dist/handshake"
)

// Cluster defaults.
const (
	DefaultSeedRetryMin = 100 * time.Millisecond
	DefaultSeedRetryMax = 5 * time.Second
	DefaultDNSRefresh   = 30 * time.Second
	// MaxSeeds bounds the seeds of a node, static and resolved together:
	// names a DNS answer adds past it are ignored (and logged).
	MaxSeeds = 1024
)

// DNSSeed names a DNS record whose answers are seed nodes.
//
// With SRV false, Name is looked up for addresses (A and AAAA records, as
// net.Resolver.LookupHost does) and each address A gives the node
// Alive@A: the shape of a headless service whose pods are named
// app@<pod IP>. With SRV true, Name is an SRV record's full name (such as
// "_dist._tcp.app.example") and each target host T gives Alive@T (the
// record's port is not used: the node's port is found through its host's
// EPMD, as for any node).
type DNSSeed struct {
	Name string
	SRV  bool
	// Alive is the part before '@' of the seed nodes' names. Default: this
	// node's.
	Alive string
	// Refresh is how often Name is resolved again. Default: 30 s.
	Refresh time.Duration
	// Resolver answers the lookups. Default: net.DefaultResolver.
	Resolver Resolver
}

// Resolver is the part of *net.Resolver a DNSSeed uses (a test passes a
// stub).
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
	LookupSRV(ctx context.Context, service, proto, name string) (cname string, addrs []*net.SRV, err error)
}

// checkSeeds checks the cluster fields and applies their defaults.
func (c *Config) checkSeeds() error {
	if len(c.Seeds) > MaxSeeds {
		return fmt.Errorf("%d Seeds, at most %d", len(c.Seeds), MaxSeeds)
	}
	for _, s := range c.Seeds {
		if err := handshake.CheckName(string(s)); err != nil {
			return fmt.Errorf("seed %q: %v", s, err)
		}
	}
	if c.SeedRetryMin < 0 || c.SeedRetryMax < 0 || c.DNSSeed.Refresh < 0 {
		return errors.New("negative SeedRetryMin, SeedRetryMax or DNSSeed.Refresh")
	}
	if c.SeedRetryMin == 0 {
		c.SeedRetryMin = DefaultSeedRetryMin
	}
	if c.SeedRetryMax == 0 {
		c.SeedRetryMax = max(DefaultSeedRetryMax, c.SeedRetryMin)
	}
	if c.SeedRetryMax < c.SeedRetryMin {
		return fmt.Errorf("SeedRetryMax %v below SeedRetryMin %v", c.SeedRetryMax, c.SeedRetryMin)
	}
	d := &c.DNSSeed
	if d.Name == "" {
		if d.SRV || d.Alive != "" || d.Resolver != nil || d.Refresh != 0 {
			return errors.New("DNSSeed without a Name")
		}
		return nil
	}
	if d.Alive != "" {
		if err := epmdCheckName(d.Alive); err != nil {
			return fmt.Errorf("DNSSeed.Alive: %v", err)
		}
		if strings.Contains(d.Alive, "@") {
			return fmt.Errorf("DNSSeed.Alive %q holds '@'", d.Alive)
		}
	}
	if d.Refresh == 0 {
		d.Refresh = DefaultDNSRefresh
	}
	if d.Resolver == nil {
		d.Resolver = net.DefaultResolver
	}
	return nil
}

// cluster is the node's seed keepers. Guarded by mu.
type cluster struct {
	mu      sync.Mutex
	keepers map[actor.Atom]context.CancelFunc // a keeper per seed, and what stops it
	static  map[actor.Atom]bool               // Config.Seeds: never stopped by a DNS answer
}

// startCluster starts a keeper per static seed and the DNS resolver. Called
// by Start once the node is up.
func (n *Node) startCluster() {
	n.cl.keepers = make(map[actor.Atom]context.CancelFunc)
	n.cl.static = make(map[actor.Atom]bool)
	for _, s := range n.cfg.Seeds {
		n.cl.static[s] = true
		n.keepSeed(s)
	}
	if n.cfg.DNSSeed.Name != "" {
		n.goHelper(n.resolveLoop)
	}
}

// Seeds lists the nodes this node keeps connected to (Config.Seeds and
// what the DNS seed last resolved to, less this node), sorted. Which of
// them are connected now: Nodes.
func (n *Node) Seeds() []actor.Atom {
	n.cl.mu.Lock()
	out := make([]actor.Atom, 0, len(n.cl.keepers))
	for s := range n.cl.keepers {
		out = append(out, s)
	}
	n.cl.mu.Unlock()
	slices.Sort(out)
	return out
}

// Connected reports whether a connection to node is up (visible or
// hidden). It never connects.
func (n *Node) Connected(node actor.Atom) bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	p := n.peers[node]
	return p != nil && p.c != nil
}

// keepSeed starts the keeper of seed unless it has one (or is this node).
// false if the MaxSeeds bound refused it.
func (n *Node) keepSeed(seed actor.Atom) bool {
	if seed == n.name {
		return true
	}
	n.cl.mu.Lock()
	defer n.cl.mu.Unlock()
	if _, ok := n.cl.keepers[seed]; ok {
		return true
	}
	if len(n.cl.keepers) >= MaxSeeds {
		return false
	}
	ctx, cancel := context.WithCancel(n.ctx)
	n.cl.keepers[seed] = cancel
	n.goHelper(func() {
		defer cancel()
		n.keep(ctx, seed)
	})
	return true
}

// keep is a seed's keeper: connect, wait for the connection's end, and
// again, with backoff between failed attempts, until ctx ends (the node
// stops, or DNS no longer names the seed).
func (n *Node) keep(ctx context.Context, seed actor.Atom) {
	b, err := backoff.New(n.cfg.SeedRetryMin, n.cfg.SeedRetryMax, backoff.Jitter(0.25))
	if err != nil { // checkSeeds made min and max valid
		panic("dist: seed backoff: " + err.Error())
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		err := n.seedRegistered(ctx, seed)
		if err == nil {
			err = n.Connect(ctx, seed)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			b.Success()
			n.mu.RLock()
			p := n.peers[seed]
			n.mu.RUnlock()
			if p != nil {
				select {
				case <-p.done:
				case <-ctx.Done():
					return
				}
			}
			continue // connect at once: the next failure backs off
		}
		d := b.Next()
		if b.Failures() == 1 {
			n.logf(levelInfo, "dist: seed %s not reachable (retrying every %v or so, at most %v): %v",
				seed, d, n.cfg.SeedRetryMax, err)
		} else {
			n.logf(levelDebug, "dist: seed %s: attempt %d: %v", seed, b.Failures(), err)
		}
		t.Reset(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// seedRegistered asks the seed's host's EPMD whether the seed runs, unless
// it is connected already. A seed that is down fails here, quietly, rather
// than in a dial, which logs each failure as a warning.
func (n *Node) seedRegistered(ctx context.Context, seed actor.Atom) error {
	if n.Connected(seed) {
		return nil
	}
	alive, host := splitName(string(seed))
	ctx, cancel := context.WithTimeout(ctx, n.cfg.HandshakeTimeout)
	defer cancel()
	if _, err := epmd.Lookup(ctx, n.cfg.epmdAddr(host), alive); err != nil {
		return fmt.Errorf("epmd lookup of %s: %w", seed, err)
	}
	return nil
}

// resolveLoop resolves the DNS seed at once and every Refresh, starting a
// keeper for each name found and stopping those of names no longer found
// (static seeds are never stopped). A failed lookup keeps the last answer.
func (n *Node) resolveLoop() {
	d := n.cfg.DNSSeed
	alive := d.Alive
	if alive == "" {
		alive = n.cfg.alive
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-n.ctx.Done():
			return
		}
		names, err := n.resolve(d, alive)
		if err != nil {
			n.logf(levelWarn, "dist: DNS seed %s: %v", d.Name, err)
		} else {
			n.applyDNS(names)
		}
		t.Reset(d.Refresh)
	}
}

// resolve looks the DNS seed up once (within HandshakeTimeout) and returns
// the node names its answers give.
func (n *Node) resolve(d DNSSeed, alive string) ([]actor.Atom, error) {
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.HandshakeTimeout)
	defer cancel()
	var hosts []string
	if d.SRV {
		_, srvs, err := d.Resolver.LookupSRV(ctx, "", "", d.Name)
		if err != nil {
			return nil, err
		}
		for _, s := range srvs {
			if s != nil {
				hosts = append(hosts, strings.TrimSuffix(s.Target, "."))
			}
		}
	} else {
		addrs, err := d.Resolver.LookupHost(ctx, d.Name)
		if err != nil {
			return nil, err
		}
		hosts = addrs
	}
	var names []actor.Atom
	for _, h := range hosts {
		name := actor.Atom(alive + "@" + h)
		if err := handshake.CheckName(string(name)); err != nil || h == "" || strings.Contains(h, "@") {
			n.logf(levelWarn, "dist: DNS seed %s: answer %q is no node name", d.Name, h)
			continue
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// applyDNS makes the DNS seeds the keepers of names (besides the static
// ones).
func (n *Node) applyDNS(names []actor.Atom) {
	dropped := 0
	for _, name := range names {
		if !n.keepSeed(name) {
			dropped++
		}
	}
	if dropped > 0 {
		n.logf(levelWarn, "dist: DNS seed %s: %d names past the bound of %d seeds ignored", n.cfg.DNSSeed.Name, dropped, MaxSeeds)
	}
	n.cl.mu.Lock()
	for s, stop := range n.cl.keepers {
		if !n.cl.static[s] && !slices.Contains(names, s) {
			stop()
			delete(n.cl.keepers, s)
		}
	}
	n.cl.mu.Unlock()
}
