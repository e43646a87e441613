// Design note: the actor record and the park protocol.
//
// An actor is a proc: its behaviour, its mailbox and a little bookkeeping,
// allocated per tenancy and published in its slot (slot/slab.go says why a
// fresh record per tenancy makes racing senders harmless). Who may touch
// what is decided by the slot word (slot/word.go): the owner — the worker
// that moved the word to Running — owns every field marked "owner" below;
// nobody else reads them.
//
// Park protocol (the lost-wake-up argument). An idle actor must be woken by
// the next message, and no message may be stranded in a parked actor's
// mailbox.
//
//	owner:  sees the mailbox empty at position mk; ParkIdle (publishes
//	        Parked); then ChangedSince(mk) — if anything was pushed since,
//	        WakeMsg its own word and, on Enqueue, push its pid.
//	sender: pushes (linked), then WakeMsg; on Enqueue, push the pid.
//
// The owner's CAS and the sender's push are both sequentially consistent
// atomics, so either the sender's WakeMsg sees Parked, or the owner's
// ChangedSince sees the push. Both may: then exactly one WakeMsg CAS wins, so
// the pid is pushed once (at most once in the run queues). After ParkIdle the
// owner no longer owns the consumer side — another worker may already be
// running the actor — which is why the re-check reads only the producer side.
//
// Death. Whoever first CASes exit 0->1 (the actor itself, or a killer on any
// goroutine) is the finaliser: it notifies links, monitors and the registry
// at once — even while the actor's handler is still running elsewhere —
// stores exit=2, and then WakeAny's the word so that some owner comes along
// to reclaim the slot. Only an owner reclaims (Finish, Reclaim, Free), and
// only after seeing exit=2, so the live count drops after every wake the
// exit produced has been enqueued. A handler orphaned by a kill keeps
// running until it returns; everything it then does through its Context is
// dropped and counted.

package actor

import (
	"sync/atomic"

	"github.com/colonyrt/colony/mailbox"
	"github.com/colonyrt/colony/slot"
	"github.com/colonyrt/colony/timers"
)

const (
	alive      = 0
	finalising = 1
	finalised  = 2
)

// proc is one tenancy of a slot. Field order packs it into 176 bytes, one
// size class (the idle-memory budget: docs/benchmarks.md).
type proc struct {
	sys *System // immutable
	pid Pid     // immutable
	// tmIdx and tmSeq are a SendAfter timer destined here, perhaps fired
	// since (timers.Join(tmIdx, tmSeq)); the others are in sys.tm.more.
	// Guarded by sys.tm.mu. Two fields, not a timers.Handle, to save the
	// Handle's padding: the record fits the 176-byte size class.
	tmIdx int32

	slot *slot.Slot[proc] // immutable
	mbox mailbox.Mailbox  // producers: anyone; consumer: owner

	beh Actor    // owner
	g   *worker  // owner: goroutine parked in a wait, written before the park CAS
	ext *procExt // owner: lazily allocated rarely-used state

	// flags: flagTrap is written by the owner (TrapExit) and read by signal
	// senders; flagTimers is set, under sys.tm.mu, before the first
	// SendAfter timer to this actor is recorded (tmIdx, sys.tm.more), and
	// the finaliser cancels them if it is set (timer.go, "Destination
	// timers"). One word for both: a separate flag cost 8 bytes of padding,
	// and with it the record's size class.
	flags procFlags
	// exit is alive, finalising or finalised; CAS 0->1 elects the
	// finaliser, which stores 2 when done (Release: the finaliser's work is
	// visible to the owner that loads 2).
	exit atomic.Uint32
	// cold holds links, monitors and the registered name; created on first
	// use by CAS, guarded by its own mutex (see exit.go).
	cold  atomic.Pointer[coldState]
	tmSeq uint64 // with tmIdx
	// seq is the spawn order of an actor spawned from outside the System
	// (a root, stopped newest first by Shutdown); 0 for every other actor.
	// Immutable.
	seq uint64

	started bool // owner: Init has run
	stop    bool // owner: Stop was called; ext.stopReason holds why
}

// tmFirst is the SendAfter timer recorded in p. sys.tm.mu held.
func (p *proc) tmFirst() timers.Handle { return timers.Join(p.tmIdx, p.tmSeq) }

// setTmFirst records h in p. sys.tm.mu held.
func (p *proc) setTmFirst(h timers.Handle) { p.tmIdx, p.tmSeq = h.Split() }

// procFlags is a word of independent atomic flags, each set and cleared by
// an atomic OR or AND so that writers of different flags lose nothing.
type procFlags struct{ v atomic.Uint32 }

const (
	flagTrap   = 1 << iota // trapping exits
	flagTimers             // SendAfter timers recorded (proc.tmFirst, tm.more)
)

func (f *procFlags) has(bit uint32) bool { return f.v.Load()&bit != 0 }

// set sets or clears bit and reports whether it was set before.
func (f *procFlags) set(bit uint32, on bool) bool {
	if on {
		return f.v.Or(bit)&bit != 0
	}
	return f.v.And(^bit)&bit != 0
}

// procExt is the owner's rarely-used state, allocated on first use so that an
// idle actor stays small.
type procExt struct {
	save        []any  // selective receive: messages looked at and skipped, in order
	stopReason  Reason // with proc.stop
	recvTimeout int64  // SetReceiveTimeout, nanoseconds; 0: none
	idleSeq     uint32 // bumped every activation; stamps ReceiveTimeout messages
	idleTimer   timerRef
	suppressed  map[Ref]struct{} // demonitored refs whose Down must not reach the handler
	starting    *startSync       // the init ack SpawnServer waits for now; nil: any ack is stale
	groupMons   map[Ref]uint64   // group monitors in force -> seq of the last GroupChange taken
	groupDrop   map[Ref]uint64   // stopped group monitors -> seq of the last GroupChange on its way
	nameMons    map[Ref]string   // monitors taken by name whose Down has not been taken -> the name
	ack         *initAck         // the InitAck a StartActor or StartLink waits for; nil: none owed
	sysp        *SysProc         // a behaviour's SysProc while a debug option is on: Reply reports to it
}

func (p *proc) x() *procExt {
	if p.ext == nil {
		p.ext = &procExt{}
	}
	return p.ext
}

// popSaved returns the oldest message a selective receive skipped; the
// handler gets those before anything newer in the mailbox. Owner only; the
// caller checked that e.save is not empty.
func (e *procExt) popSaved() any {
	m := e.save[0]
	e.save[0] = nil
	e.save = e.save[1:]
	if len(e.save) == 0 {
		e.save = nil
	}
	return m
}

// shardOf is the slab free-list shard of w's role: one per scheduler index,
// and one more for everyone outside the schedulers (w nil or role-less).
func (sys *System) shardOf(w *worker) int {
	if w == nil || w.role == nil {
		return sys.nsched
	}
	return w.role.id
}

// activate runs up to Budget messages through the handler.
func (w *worker) activate(p *proc) {
	c := &w.ctx
	c.p = p
	returned := false
	defer func() {
		if r := recover(); r != nil {
			w.crashed(p, r)
		} else if !returned {
			w.goexited(p) // the handler called runtime.Goexit (goexit.go)
		}
		c.p = nil
	}()
	if p.exit.Load() != alive {
		w.release(p)
		returned = true
		return
	}
	if !p.started {
		p.started = true
		if in, ok := p.beh.(Initer); ok {
			in.Init(c)
		}
	}
	switch w.drain(p, c) {
	case actPark:
		w.parkIdle(p)
	case actYield:
		// Budget spent: to the back of the queue.
		p.slot.Word.Yield(p.pid.gen)
		w.push(p.pid, false)
	case actFinish:
		w.finish(p)
	}
	returned = true
}

const (
	actPark = iota
	actYield
	actFinish
)

// drain handles up to Budget messages and says what the activation ends
// with. Counters are flushed once per activation, not per message (and the
// consumed count also when the handler blocks: waitPark), so the mailbox's
// count runs ahead of what is queued by at most the messages this
// activation has taken; w.popped is that difference. A bounded mailbox is
// the exception: its count is what the bound is checked against, so each
// message is recorded as it is taken.
func (w *worker) drain(p *proc, c *Context) (end int) {
	defer func() {
		p.mbox.Consumed(w.popped) // also the count of messages handled (Taken)
		w.popped = 0
		w.obs.taken = p.mbox.Taken() // while we own p: the activation's count (observe.go)
	}()
	budget := w.sys.cfg.Budget
	// A bounded mailbox's count is what MailboxBound is checked against:
	// each message is recorded as taken when popped, or the messages this
	// activation took would still count against the bound while their
	// handlers run, and senders were refused with the queue nearly empty.
	// (The bound is immutable: read once, not per message.)
	bounded := p.mbox.Bound() > 0
	for n := 0; n < budget; n++ {
		if p.stop || p.exit.Load() != alive {
			return actFinish
		}
		if p.mbox.HasSignal() {
			for p.mbox.HasSignal() {
				sig, _ := p.mbox.PopSignal()
				if f, ok := sig.(func(*Context)); ok {
					f(c)
				}
			}
			if p.stop || p.exit.Load() != alive {
				return actFinish
			}
		}
		var msg any
		saved := false
		if e := p.ext; e != nil && len(e.save) > 0 {
			msg, saved = e.popSaved(), true
		} else {
			var ok bool
			if msg, ok = p.mbox.Pop(w.cache()); !ok {
				return actPark
			}
			if bounded {
				p.mbox.Consumed(1)
			} else {
				w.popped++
			}
		}
		// A saved message was accepted when the selective receive saved it;
		// accepting it again would drop a saved ReceiveTimeout whenever that
		// receive had since taken another message.
		if !saved && (p.ext != nil || p.cold.Load() != nil) {
			var ok bool
			if msg, ok = p.accept(w.sys, msg); !ok {
				continue // bookkeeping: a stale idle timeout, a demonitored Down
			}
		}
		p.beh.Receive(c, msg)
	}
	if p.stop || p.exit.Load() != alive {
		return actFinish
	}
	return actYield
}

// parkIdle parks an actor whose mailbox is empty (the park protocol above).
func (w *worker) parkIdle(p *proc) {
	mk := p.mbox.Marks()
	if e := p.ext; e != nil && e.recvTimeout > 0 {
		w.sys.armIdleTimeout(p, e)
	}
	gen := p.pid.gen
	if !p.slot.Word.ParkIdle(gen) {
		// Notified: a wake raced the activation; we were re-queued.
		w.push(p.pid, false)
		return
	}
	// Parked: we no longer own p. Re-read the producer side only.
	if p.mbox.ChangedSince(mk) && p.slot.Word.WakeMsg(gen) == slot.Enqueue {
		w.push(p.pid, false)
	}
}

// finish ends the actor from its owner: Stop was called, or someone else
// started its exit.
func (w *worker) finish(p *proc) {
	if p.exit.Load() == alive && p.stop {
		reason := Reason(Normal)
		if p.ext != nil && p.ext.stopReason != nil {
			reason = p.ext.stopReason
		}
		w.sys.terminate(w, p, reason)
	}
	w.release(p)
}

// crashed turns a recovered panic into the actor's exit.
func (w *worker) crashed(p *proc, r any) {
	if _, ok := r.(exitUnwind); !ok && p.exit.Load() == alive {
		reason := Panic{Value: r, Stack: stack()}
		w.sys.logCrash(p.pid, reason)
		w.sys.terminate(w, p, reason)
	}
	w.release(p)
}

// release gives up an actor that is exiting: reclaim it if its finaliser is
// done, otherwise step aside until the finaliser's WakeAny re-queues it.
// Owner only.
func (w *worker) release(p *proc) {
	gen := p.pid.gen
	if p.exit.Load() != finalised {
		if !p.slot.Word.ParkIdle(gen) {
			w.push(p.pid, false)
		}
		return
	}
	// We own a finalised actor: end the tenancy.
	sys := w.sys
	p.slot.Word.Finish(gen)
	if n := p.mbox.Close(); n > 0 {
		sys.dropped.Add(uint64(n))
	}
	if p.ext != nil {
		sys.dropped.Add(uint64(len(p.ext.save)))
		sys.cancelTimer(p.ext.idleTimer)
	}
	p.beh, p.ext, p.g = nil, nil, nil
	p.slot.SetRec(nil)
	p.slot.Word.Reclaim(gen)
	sys.slab.Free(p.pid.idx, sys.shardOf(w))
	if p.seq != 0 {
		sys.liveRoots.Add(-1)
	}
	if sys.live.Add(-1) == 0 {
		sys.checkIdle()
	}
}
