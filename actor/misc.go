package actor

import (
	"fmt"
	"runtime/debug"

	"github.com/colonyrt/colony/mailbox"
	"github.com/colonyrt/colony/slot"
)

func stack() string { return string(debug.Stack()) }

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// assertQueued checks the at-most-once-queued invariant at a push (race
// builds only): the word must read exactly (gen, Queued).
func (sys *System) assertQueued(pid Pid) {
	sl := sys.slab.At(pid.idx)
	g, _, st := sl.Word.Snapshot()
	if g != pid.gen || st != slot.Queued {
		panic(fmt.Sprintf("actor: broken invariant: push of %v whose slot is %v (gen %d)", pid, st, g))
	}
}

// accept applies the runtime's bookkeeping to a message about to reach the
// handler (or a selective receive) and returns the message the handler
// gets; false means drop it. Owner only.
func (p *proc) accept(sys *System, m any) (any, bool) {
	switch v := m.(type) {
	case Down:
		if e := p.ext; e != nil && (e.suppressed != nil || e.nameMons != nil) {
			if _, ok := e.suppressed[v.Ref]; ok {
				delete(e.suppressed, v.Ref)
				return nil, false
			}
			// A monitor by name: the Down names the name it was set up
			// with (MonitorName), as OTP's DOWN names {Name, Node}.
			if name, ok := e.nameMons[v.Ref]; ok {
				delete(e.nameMons, v.Ref)
				v.Name = name
				m = v
			}
		}
		if cs := p.cold.Load(); cs != nil {
			cs.node.RemoveWatching(uint64(v.Ref))
		}
		p.noteMessage(sys) // a Down is received like any message
	case GroupChange:
		if e := p.ext; e != nil && !e.acceptGroupChange(v) {
			return nil, false
		}
		p.noteMessage(sys)
	case ReceiveTimeout:
		e := p.ext
		return m, e != nil && e.recvTimeout > 0 && v.seq == e.idleSeq
	case *startSync:
		// An init ack (server.go, "The race") is live only while this
		// actor's SpawnServer waits for exactly it; any other came after
		// its starter gave up and is dropped as a late reply, so the
		// internal type never reaches a handler or a Receive's match. An
		// actor sent an ack has run SpawnServer, which allocated p.ext, so
		// drain never skips this check for it.
		if e := p.ext; e == nil || v != e.starting {
			sys.lateReplies.Add(1)
			return nil, false
		}
		p.noteMessage(sys)
	default:
		p.noteMessage(sys)
	}
	return m, true
}

// noteMessage restarts the idle period of SetReceiveTimeout: a message was
// received. Owner only.
func (p *proc) noteMessage(sys *System) {
	if e := p.ext; e != nil && e.recvTimeout > 0 {
		e.idleSeq++
		sys.cancelTimer(e.idleTimer)
		e.idleTimer = timerRef{}
	}
}

// suppress makes sure no Down for ref reaches the handler: one already
// pulled into the save queue is removed now, one still on its way is dropped
// when it arrives. Owner only.
func (e *procExt) suppress(ref Ref) {
	for i, m := range e.save {
		if d, ok := m.(Down); ok && d.Ref == ref {
			e.save = append(e.save[:i:i], e.save[i+1:]...)
			return
		}
	}
	if e.suppressed == nil {
		e.suppressed = make(map[Ref]struct{})
	}
	e.suppressed[ref] = struct{}{}
}

// wcache is the node cache of the role worker w holds, nil outside the
// system.
func wcache(w *worker) *mailbox.Cache {
	if w == nil {
		return nil
	}
	return w.cache()
}

// cache is the node cache of the role w holds (sched.nc), nil if it holds
// none.
func (w *worker) cache() *mailbox.Cache {
	if w.role == nil {
		return nil
	}
	return &w.role.nc
}
