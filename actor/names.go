package actor

import (
	"errors"
	"fmt"

	"github.com/colonyrt/colony/registry"
)

// names is the System's name registry and process groups.
type names struct {
	reg    *registry.Registry[Pid]
	groups *registry.Groups[Pid]
}

func (n *names) init() {
	n.reg = registry.New[Pid]()
	n.groups = &registry.Groups[Pid]{}
}

// mapRegErr turns a registry error about name into the actor package's
// sentinel, wrapped with the name ("actor: name already registered:
// \"worker\""), so errors.Is works against actor's errors alone.
func mapRegErr(err error, name string) error {
	var sentinel error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, registry.ErrEmptyName):
		return ErrBadName
	case errors.Is(err, registry.ErrNameTaken):
		sentinel = ErrNameTaken
	case errors.Is(err, registry.ErrAlreadyNamed):
		sentinel = ErrAlreadyNamed
	case errors.Is(err, registry.ErrNotRegistered):
		sentinel = ErrNotRegistered
	default:
		return err
	}
	return fmt.Errorf("%w: %q", sentinel, name)
}

func (n *names) register(name string, pid Pid) error {
	return mapRegErr(n.reg.Register(name, pid), name)
}

// unregisterPid removes name if pid still holds it.
func (n *names) unregisterPid(name string, pid Pid) {
	if cur, ok := n.reg.Whereis(name); ok && cur == pid {
		n.reg.Remove(pid)
	}
}

// Register gives pid a name (Erlang's register/2). Errors: ErrBadName for "",
// ErrNameTaken, ErrAlreadyNamed (an actor holds at most one name), ErrNoProc
// for a dead pid (Erlang's badarg), ErrBadPid for the zero Pid or another
// System's; name errors are wrapped with the name. The name vanishes when the actor dies, in the
// same step as its links and monitors fire.
func (sys *System) Register(name string, pid Pid) error {
	if name == "" {
		return ErrBadName
	}
	p, err := sys.lookup(pid)
	if err != nil {
		return err
	}
	return sys.registerCold(p.coldNode(), name, pid)
}

// registerCold registers pid, whose cold state is cs, under name. Holding
// cs.mu across the registry insert makes registration atomic with death:
// finalise marks dead under cs.mu before reading the name. ErrNoProc if pid
// died first.
func (sys *System) registerCold(cs *coldState, name string, pid Pid) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.dead {
		return ErrNoProc
	}
	if err := sys.nm.register(name, pid); err != nil {
		return err
	}
	cs.name = name
	return nil
}

// releaseName removes name if p holds it: a server whose Init failed gives
// its start name back before its starter learns of the failure. Under cs.mu,
// as Unregister, so the record's name and the registry entry go in one step
// and a death meanwhile finds either both or neither.
func (sys *System) releaseName(p *proc, name string) {
	cs := p.cold.Load()
	if name == "" || cs == nil {
		return // no name was given, or the actor never held one
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.name == name {
		cs.name = ""
		sys.nm.unregisterPid(name, p.pid)
	}
}

// spawnName is the name opts give an actor (the Name option), or "".
func spawnName(opts []SpawnOption) string {
	o := applySpawnOpts(opts)
	return o.name
}

// Unregister removes a name (Erlang's unregister/1). ErrNotRegistered
// (wrapped with the name) if no actor holds it.
func (sys *System) Unregister(name string) error {
	pid, ok := sys.nm.reg.Whereis(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotRegistered, name)
	}
	if p := sys.procOf(pid); p != nil {
		if cs := p.cold.Load(); cs != nil {
			cs.mu.Lock()
			if cs.name == name {
				// Clear the record's name and remove the registry entry in
				// one step under cs.mu, as registerCold adds them. Done in
				// two (found in review), a death between them found no name
				// to remove, signalled its monitors and links, and left the
				// name bound to the dead pid until this call got to the
				// registry: a Register after the Down failed ErrNameTaken.
				cs.name = ""
				err := sys.nm.reg.Unregister(name)
				cs.mu.Unlock()
				return mapRegErr(err, name)
			}
			cs.mu.Unlock()
		}
	}
	return mapRegErr(sys.nm.reg.Unregister(name), name)
}

// Whereis returns the actor registered under name.
func (sys *System) Whereis(name string) (Pid, bool) { return sys.nm.reg.Whereis(name) }

// Registered lists the registered names.
func (sys *System) Registered() []string { return sys.nm.reg.Names() }

// SendName sends msg to the actor registered under name. Unlike Send to a
// pid, sending to a name nobody holds fails loudly with ErrNotRegistered
// (Erlang raises badarg).
func (sys *System) SendName(name string, msg any) error {
	pid, ok := sys.nm.reg.Whereis(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotRegistered, name)
	}
	return sys.Send(pid, msg)
}

// JoinGroup adds pid to a process group (OTP pg); an actor may join a group
// several times and is counted once per join. Members leave at death.
// Errors: ErrBadPid for the zero Pid or another System's; ErrNoProc for a
// dead pid (pg:join/2 accepts a dead pid and drops it when pg's monitor of
// it fires: here it is refused, so no membership outlives its actor). There is no pg:monitor: an actor that must
// learn of new members has them announce themselves, or polls GroupMembers.
func (sys *System) JoinGroup(group string, pid Pid) error {
	p, err := sys.lookup(pid)
	if err != nil {
		return err
	}
	cs := p.coldNode()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.dead {
		return ErrNoProc
	}
	cs.joined = true
	sys.nm.groups.Join(group, pid)
	return nil
}

// LeaveGroup removes one join of pid from group. Errors: ErrBadPid for the
// zero Pid or another System's; registry.ErrNotJoined if pid has no join
// left in group (pg's not_joined), as for a dead pid.
func (sys *System) LeaveGroup(group string, pid Pid) error {
	// A malformed pid is ErrBadPid, as for JoinGroup (found in review: it
	// was reported as not joined). A dead pid stays not joined, as in pg:
	// its death removed its entries.
	if _, err := sys.lookup(pid); err == ErrBadPid {
		return err
	}
	return sys.nm.groups.Leave(group, pid)
}

// GroupMembers lists group's members in join order.
func (sys *System) GroupMembers(group string) []Pid { return sys.nm.groups.Members(group) }
