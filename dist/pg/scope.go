package pg

// The scope: its API, its table and its actor.
//
// Problem. pg must interoperate with Erlang's pg, so the protocol is not
// ours to choose: it is lib/kernel/src/pg.erl's (OTP 23 to 25 speak the
// same one), and an Erlang scope crashes (badarg) on any message it does
// not expect, so this scope sends exactly what pg.erl sends:
//
//	to {Scope, Node}  {discover, Self}                  at start, to every node; on nodeup, to that node
//	to a peer         {'$gen_cast', {sync, Self, [{Group, [Pid]}]}}   answer to a discover: every local member
//	to a peer         {discover, Self}                  answer to a discover from a peer not known yet
//	to every peer     {join, Self, Group, [Pid]}        a local join
//	to every peer     {leave, Self, [Pid], [Group]}     a local leave, or a local member's death
//
// and takes what pg.erl takes: the same, with a join's or leave's pids as
// one pid or a list, {discover, Peer, Version} (which OTP 26 accepts for a
// later pg), and the sync as a '$gen_cast' tuple or a Colony cast (a
// remote cast delivered as actor.CastMsg). Sends to peers are pg.erl's
// [noconnect]: a peer whose node is not connected is skipped
// (Node.Connected), so a scope never dials a node that went away.
//
// State. The actor owns local (every local member: its monitor and the
// groups it joined, once per join) and remote (every peer scope: its node
// and its groups' members as its last sync and later joins and leaves
// say). A join or leave of a peer not in remote is ignored, as pg.erl does
// (a node flickering, a stranger). The table (group -> all members, local
// members) is what readers read: the actor writes it under mu, readers take
// mu's read lock; it plays pg.erl's ETS table.
//
// Peers and their end. As pg.erl does, the scope monitors each peer scope
// (a remote monitor, MONITOR_P) and drops its members on the Down: the peer
// died, or its node went down (noconnection). Nodedown itself is ignored,
// as in pg.erl. The race: a connection lost and made again at once (a
// Disconnect and a send, a partition that heals) may deliver the new
// connection's discover, sync or joins before the old connection's
// noconnection Down (Erlang orders them; here the two connections' readers
// run apart), and the peer, the same pid, is then dropped after it was
// heard. So a peer's Down whose node is connected again is followed by a
// fresh discover, whose answer (a sync: the peer's whole local state) puts
// the peer back. A new peer pid on the node of a known peer drops the
// known one at once: the scope's name is registered, so the old one is
// gone (its Down would say so a little later).
//
// Multisets. Lists keep pg.erl's order (a join puts its pids first) and
// remove as Erlang's -- does: one occurrence per pid named.

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist"
	"github.com/colonyrt/colony/dist/etf"
)

// DefaultScope is the scope pg:start_link() starts.
const DefaultScope = "pg"

var (
	// ErrNotLocal: a Join or Leave named a pid that is not of this node
	// (pg's {nolocal, Pid}), or the zero Pid.
	ErrNotLocal = errors.New("pg: not a local pid")
	// ErrNotJoined: a Leave named no pid that had joined the group (pg's
	// not_joined).
	ErrNotJoined = errors.New("pg: not joined")
	// ErrBadGroup: the group is no term (etf cannot encode it).
	ErrBadGroup = errors.New("pg: bad group")
)

var (
	atomDiscover = actor.Atom("discover")
	atomJoin     = actor.Atom("join")
	atomLeave    = actor.Atom("leave")
	atomSync     = actor.Atom("sync")
	atomGenCast  = actor.Atom("$gen_cast")
)

// Scope is a running pg scope on a node. Its methods may be called from
// any goroutine. A Scope is made by Start and must not be copied.
type Scope struct {
	n    *dist.Node
	name string
	pid  actor.Pid
	dec  etf.Decoder

	mu     sync.RWMutex      // guards groups; written only by the scope actor
	groups map[string]*entry // by the group's encoding
	dead   bool              // the actor has died: the table is empty for good
	// stopNodes ends the actor's MonitorNodes subscription (set by its
	// Init, run by closer).
	stopNodes func()
}

// entry is one group's members: all of them, and the local ones (a subset),
// each once per join.
type entry struct {
	group      any // the group as a decoded term (canonical)
	all, local []actor.Pid
}

// Option configures Start.
type Option func(*options)

type options struct{ name string }

// Name sets the scope's name (pg:start_link(Scope)), the name the scope
// actor is registered under on every node. Default: DefaultScope.
func Name(scope string) Option { return func(o *options) { o.name = scope } }

// Start starts a scope on n: an actor registered under the scope's name
// that discovers the scope's other members on every node connected now and
// on every node that connects later. It stops when its actor dies (Stop,
// or the System's Shutdown); Members and the rest then report nothing.
// Errors: the spawn's (actor.ErrNameTaken if the name is taken: one scope
// of a name per node).
func Start(n *dist.Node, opts ...Option) (*Scope, error) {
	o := options{name: DefaultScope}
	for _, f := range opts {
		if f == nil {
			return nil, errors.New("pg: nil option")
		}
		f(&o)
	}
	if o.name == "" {
		return nil, errors.New("pg: empty scope name")
	}
	s := &Scope{n: n, name: o.name, groups: make(map[string]*entry), dec: etf.Decoder{Node: n.Encoder().Node}}
	a := &scopeActor{s: s, local: make(map[actor.Pid]*member), remote: make(map[actor.Pid]*peerView)}
	sys := n.System()
	pid, err := sys.Spawn(a, actor.Name(o.name))
	if err != nil {
		return nil, fmt.Errorf("pg: start scope %s: %w", o.name, err)
	}
	s.pid = pid
	if _, err := sys.Hold(pid, closer{s}); err != nil {
		return nil, fmt.Errorf("pg: start scope %s: %w", o.name, err)
	}
	return s, nil
}

// closer empties the table at the scope actor's death.
type closer struct{ s *Scope }

func (c closer) Close() error {
	c.s.mu.Lock()
	c.s.groups, c.s.dead = map[string]*entry{}, true
	stop := c.s.stopNodes
	c.s.mu.Unlock()
	if stop != nil {
		stop()
	}
	return nil
}

// Name is the scope's name.
func (s *Scope) Name() string { return s.name }

// Pid is the scope actor's pid.
func (s *Scope) Pid() actor.Pid { return s.pid }

// Stop stops the scope: its actor exits with reason shutdown, and its
// peers drop this node's members when their monitors of it fire.
func (s *Scope) Stop() { s.n.System().Exit(s.pid, actor.Shutdown) }

// Join adds pids (each once per time it is named; at least one) to group
// and tells the scope's peers (pg:join/3). They must be local pids. It
// returns once the local table has them. c is the caller (the System, from
// plain Go code, or the Context of the calling handler, whose wait hands
// its scheduler role on). A pid that is dead is removed again at once, as
// in OTP (its monitor fires noproc).
func (s *Scope) Join(c actor.Caller, group any, pids ...actor.Pid) error {
	key, g, err := s.check(group, pids)
	if err != nil {
		return err
	}
	_, err = c.Call(s.pid, joinReq{key, g, slices.Clone(pids)}, actor.Infinity)
	return err
}

// Leave removes pids from group, once each, and tells the scope's peers
// (pg:leave/3). ErrNotJoined if none of them had joined it.
func (s *Scope) Leave(c actor.Caller, group any, pids ...actor.Pid) error {
	key, g, err := s.check(group, pids)
	if err != nil {
		return err
	}
	_, err = c.Call(s.pid, leaveReq{key, g, slices.Clone(pids)}, actor.Infinity)
	return err
}

func (s *Scope) check(group any, pids []actor.Pid) (string, any, error) {
	if len(pids) == 0 {
		return "", nil, fmt.Errorf("%w: no pid", ErrNotLocal)
	}
	sys := s.n.System()
	for _, p := range pids {
		if _, _, ok := sys.LocalParts(p); !ok {
			return "", nil, fmt.Errorf("%w: %v", ErrNotLocal, p)
		}
	}
	return s.key(group)
}

// key returns a group's key (its encoding) and its canonical value.
func (s *Scope) key(group any) (string, any, error) {
	b, err := s.n.Encoder().Append(nil, group)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrBadGroup, err)
	}
	g, _, err := s.dec.Decode(b)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrBadGroup, err)
	}
	return string(b), g, nil
}

// Members lists group's members on every node the scope knows, once per
// join (pg:get_members/2), most recent joins first; nil for a group with
// none (or a group that is no term).
func (s *Scope) Members(group any) []actor.Pid { return s.members(group, false) }

// LocalMembers lists group's members on this node (pg:get_local_members/2).
func (s *Scope) LocalMembers(group any) []actor.Pid { return s.members(group, true) }

func (s *Scope) members(group any, local bool) []actor.Pid {
	b, err := s.n.Encoder().Append(nil, group)
	if err != nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.groups[string(b)]
	if e == nil {
		return nil
	}
	if local {
		return slices.Clone(e.local)
	}
	return slices.Clone(e.all)
}

// WhichGroups lists the groups with at least one member (pg:which_groups/1),
// as decoded terms, in no set order.
func (s *Scope) WhichGroups() []any { return s.which(false) }

// WhichLocalGroups lists the groups with at least one local member.
func (s *Scope) WhichLocalGroups() []any { return s.which(true) }

func (s *Scope) which(local bool) []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []any
	for _, e := range s.groups {
		if !local || len(e.local) > 0 {
			out = append(out, e.group)
		}
	}
	return out
}

// Table writes: the scope actor's only (see the note at the top).

func (s *Scope) joinTable(key string, group any, pids []actor.Pid, local bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return
	}
	e := s.entryLocked(key, group)
	e.all = append(slices.Clone(pids), e.all...)
	if local {
		e.local = append(slices.Clone(pids), e.local...)
	}
}

// entryLocked returns the entry of key, made for group if there is none.
// Called with s.mu held for writing.
func (s *Scope) entryLocked(key string, group any) *entry {
	e := s.groups[key]
	if e == nil {
		e = &entry{group: group}
		s.groups[key] = e
	}
	return e
}

// leaveTable takes pids out of the group; it returns the group's value,
// and false if the group had no entry (nothing changed).
func (s *Scope) leaveTable(key string, pids []actor.Pid, local bool) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.groups[key]
	if e == nil {
		return nil, false
	}
	e.all = subtract(e.all, pids)
	if local {
		e.local = subtract(e.local, pids)
	}
	if len(e.all) == 0 {
		delete(s.groups, key)
	}
	return e.group, true
}

// replaceTable is a sync's change of a group a peer had already: its old
// members out, its new ones in (pg.erl: Pids ++ (AllOld -- OldPids)).
func (s *Scope) replaceTable(key string, group any, old, pids []actor.Pid) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return
	}
	e := s.entryLocked(key, group)
	e.all = append(slices.Clone(pids), subtract(e.all, old)...)
	if len(e.all) == 0 {
		delete(s.groups, key)
	}
}

// subtract is Erlang's list -- pids: one occurrence of each pid named
// removed, the first. It returns a new slice. Removing the first k
// occurrences of a pid named k times is what removing them one at a time
// does, so one pass with counts does it in O(len(list) + len(pids)) (a
// node's scope leaving with thousands of members in a group of thousands).
func subtract(list, pids []actor.Pid) []actor.Pid {
	if len(pids) <= 8 {
		out := slices.Clone(list)
		for _, p := range pids {
			if i := slices.Index(out, p); i >= 0 {
				out = slices.Delete(out, i, i+1)
			}
		}
		return out
	}
	counts := make(map[actor.Pid]int, len(pids))
	for _, p := range pids {
		counts[p]++
	}
	out := make([]actor.Pid, 0, len(list))
	for _, p := range list {
		if counts[p] > 0 {
			counts[p]--
			continue
		}
		out = append(out, p)
	}
	return out
}
