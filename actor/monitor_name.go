package actor

// MonitorName monitors the actor registered under name, as
// erlang:monitor(process, Name) does: the name is resolved once, now, and
// the monitor follows the actor that held it (not the name: a later holder
// of the name is not watched). Its Down carries Name; its Pid is that
// actor. If nobody holds the name, a Down with Reason NoProc, Name set and
// the zero Pid is delivered at once. Monitoring a name the caller itself
// holds sets up nothing, as Monitor of the caller does. Errors: ErrBadName
// for the empty name; ErrNoProc if the caller has been killed while this
// handler runs.
func (c *Context) MonitorName(name string) (Ref, error) {
	p := c.proc()
	if c.orphan() {
		return 0, ErrNoProc
	}
	if name == "" {
		return 0, ErrBadName
	}
	sys := c.w.sys
	pid, held := sys.Whereis(name)
	if !held {
		ref := sys.newRef()
		sys.deliver(c.w, p, Down{Ref: ref, Reason: NoProc, Name: name})
		return ref, nil
	}
	ref, err := sys.monitor(c.w, p, pid)
	if err != nil {
		return 0, err
	}
	if pid != p.pid {
		e := p.x()
		if e.nameMons == nil {
			e.nameMons = make(map[Ref]string)
		}
		e.nameMons[ref] = name
	}
	return ref, nil
}
