package actor

import (
	"io"

	"github.com/colonyrt/colony/slot"
)

// SchedulerStats are the counters of one scheduler index. Every uint64
// field is a cumulative counter since Start that never decreases (for a
// metrics exporter: a counter, not a gauge); Queued is a gauge. They
// survive the watchdog's retakes: an index's counts include those of the
// roles it retired.
type SchedulerStats struct {
	ID              int
	Activations     uint64 // activations run (an activation handles up to Budget messages)
	Parks           uint64 // times the role parked idle
	Steals          uint64 // successful steals from other roles
	TimekeeperWakes uint64 // wake-ups by a timer expiry while parked as timekeeper
	Handoffs        uint64 // roles handed to a spare because a handler blocked
	Resumes         uint64 // roles handed to a blocked handler to resume it
	Retakes         uint64 // roles retired by the watchdog (a handler ran too long)
	Queued          int    // pids in the role's local queue and runnext now
}

// Stats is a snapshot of the System's counters. The uint64 fields
// (Spawned, Dropped, Orphaned, LateReplies) are cumulative counters since
// Start (Dropped, Orphaned and LateReplies never decrease; Spawned may
// step back briefly: a failed spawn is taken back out of it after its
// slot was counted); the int fields (Live, Timers, Workers,
// SpareWorkers, GlobalQueue) are gauges, values now. Totals across
// schedulers are the sums of Schedulers' fields. Each field is read on its
// own, with no lock across them: the snapshot is not atomic as a whole.
type Stats struct {
	// Live is the number of actor slots in use: live actors, and dead ones
	// whose slot a scheduler has not reclaimed yet. A dead actor counts
	// until then, a moment after its Down, Exit and Watch have gone out
	// (System.Alive is false already): a test that checks Live after a death
	// polls for it.
	Live         int
	Spawned      uint64 // actors spawned since Start
	Dropped      uint64 // messages sent to dead actors or left in a dead actor's mailbox (counted when its slot is reclaimed, as Live)
	Orphaned     uint64 // operations by handlers of killed actors, dropped
	LateReplies  uint64 // replies to calls that had already ended (timed out, caller dead), and init acks of server starts given up
	Timers       int    // pending timers
	Workers      int    // goroutines: scheduler roles, spares, blocked handlers
	SpareWorkers int    // idle goroutines kept for hand-offs (MaxSpareWorkers)
	GlobalQueue  int    // pids in the global run queue now
	Schedulers   []SchedulerStats
}

// Stats returns a snapshot of the counters.
func (sys *System) Stats() Stats {
	st := Stats{
		Live:        int(sys.live.Load()),
		Spawned:     sys.spawnedCount(),
		Dropped:     sys.dropped.Load(),
		Orphaned:    sys.orphaned.Load(),
		LateReplies: sys.lateReplies.Load(),
		Timers:      sys.tm.pending(),
		Workers:     int(sys.nworkers.Load()),
		GlobalQueue: sys.global.Len(),
	}
	sys.spareMu.Lock()
	st.SpareWorkers = len(sys.spares)
	sys.spareMu.Unlock()
	sys.statsMu.Lock()
	defer sys.statsMu.Unlock()
	for i := range sys.roles {
		s := sys.roles[i].Load()
		c := &sys.stats[i]
		q := s.local.Len()
		if s.next.Peek() != 0 {
			q++
		}
		st.Schedulers = append(st.Schedulers, SchedulerStats{
			ID: i, Activations: activations(c, s), Parks: c.parks.Load(), Steals: c.steals.Load(),
			TimekeeperWakes: c.tkWakes.Load(), Handoffs: c.handoffs.Load(), Resumes: c.resumes.Load(),
			Retakes: c.retakes.Load(), Queued: q,
		})
	}
	return st
}

// The values of ActorInfo.State.
const (
	StateQueued   = "queued"   // runnable, in a run queue
	StateRunning  = "running"  // its handler runs
	StateNotified = "notified" // running, and woken meanwhile: it runs again
	StateParked   = "parked"   // idle with an empty mailbox, or in a selective Receive
	StateBlocked  = "blocked"  // in a wait no message ends: a Call, a Sleep, Blocking
)

// ActorInfo describes one actor.
type ActorInfo struct {
	Pid Pid
	// State is one of StateQueued, StateRunning, StateNotified,
	// StateParked and StateBlocked.
	State string
	// MailboxLen is the number of messages queued and not yet taken by the
	// actor. From Context.Info it is exact, as Erlang's
	// process_info(self(), message_queue_len): the message being handled
	// is not counted, messages a selective receive skipped are. From
	// System.Info it is a snapshot of the mailbox proper: messages skipped
	// by a selective receive are not in it, and while a handler runs (not
	// while it is blocked) it still counts the messages that activation
	// has taken, at most Config.Budget, since the runtime records them per
	// activation rather than per message (except for an actor with a
	// MailboxBound, whose count is what the bound is checked against: it
	// records each message as it is taken).
	MailboxLen int
	// Handled is the number of messages the actor has taken from its
	// mailbox: by its handler loop or by a selective receive (a message
	// a receive skipped counts when it is taken, not again when it is
	// handled later). Exact from Context.Info; from System.Info it is
	// recorded per activation, like MailboxLen: while a handler runs it
	// leaves out that activation's messages.
	Handled  uint64
	TrapExit bool
	Name     string
	Links    int
	// Monitors is the number of monitors held on this actor by others
	// (actors' Monitor and outside Watches): Erlang's
	// process_info(Pid, monitored_by), not process_info(Pid, monitors).
	// The monitors the actor itself holds, on actors or on groups, are not
	// counted here: see Watching.
	Monitors int
	// Watching is the number of monitors this actor holds on other actors
	// (Monitor, SpawnMonitor): the length of Erlang's
	// process_info(Pid, monitors), without group monitors (see
	// GroupMonitors). A monitor counts until it is demonitored or its Down
	// is taken from the mailbox (a Down still queued counts).
	Watching int
	// GroupMonitors is the number of process-group monitors the actor
	// holds (MonitorGroup; the rest of process_info(Pid, monitors)): one
	// counts until DemonitorGroup or the actor's exit.
	GroupMonitors int
}

// Info describes the actor pid (ErrNoProc if it is dead).
func (sys *System) Info(pid Pid) (ActorInfo, error) {
	p, err := sys.lookup(pid)
	if err != nil {
		return ActorInfo{}, err
	}
	g, _, s := p.slot.Word.Snapshot()
	if g != pid.gen || s == slot.Done || s == slot.Vacant {
		return ActorInfo{}, ErrNoProc
	}
	info := ActorInfo{Pid: pid, State: s.String(), MailboxLen: p.mbox.Len(), Handled: p.mbox.Taken(), TrapExit: p.flags.has(flagTrap)}
	info.Name, _ = sys.nm.reg.NameOf(pid)
	info.GroupMonitors = sys.nm.groups.Watching(pid)
	if cs := p.cold.Load(); cs != nil {
		info.Links, info.Monitors, info.Watching = cs.node.Counts()
	}
	return info, nil
}

// Info describes the calling actor itself (Erlang's process_info(self())).
// Unlike System.Info(c.Self()), its MailboxLen is exact (see ActorInfo).
// It is ErrNoProc if the actor was killed while this handler runs (the
// rest of the system sees it dead already).
func (c *Context) Info() (ActorInfo, error) {
	p := c.proc()
	if p.exit.Load() != alive {
		return ActorInfo{}, ErrNoProc
	}
	info, err := c.w.sys.Info(p.pid)
	if err != nil {
		return info, err
	}
	// The mailbox's count is every message pushed (or being pushed) and not
	// yet recorded as consumed; every pop but drain's is recorded at once,
	// and drain's unrecorded ones are w.popped, so the difference is what
	// is still in the lane (never negative: the count never under-counts).
	// Skipped messages left the lane but not the actor's queue.
	info.MailboxLen = p.mbox.Len() - c.w.popped
	info.Handled += uint64(c.w.popped)
	if p.ext != nil {
		info.MailboxLen += len(p.ext.save)
	}
	return info, nil
}

// Resources. Floor-3 packages (io/) tie resources to an actor's life
// without actor importing them: Hold registers a closer owned by pid; it is
// closed when pid dies, and every held resource counts toward Wait's
// "nothing left to do". The returned release function forgets it (call it
// when the owner closes the resource itself); it is idempotent.

type heldRes struct {
	c io.Closer
}

// Hold ties closer to pid's life. It fails with ErrNoProc if pid is dead,
// ErrStopped once the System has shut down (as Send does: netio's Listen
// and Dial after Shutdown said "no such process", TestListenAfterShutdown).
// release unties it and reports whether it did: false if pid's death has
// already taken the resource to close it.
//
// closer.Close runs once, in pid's death path: on the goroutine that
// finalises the actor (a scheduler role, or the caller of the Exit that
// killed it), after its handler has returned (a Server's Terminate
// included) unless it was killed, and before its monitors and links are
// told. It must not block: close an fd, cancel a context, and hand
// anything slow (an http.Server's Shutdown) to a goroutine of its own.
// A nil closer is a misuse and panics at once (it used to be taken, and
// pid's death then panicked in its finaliser, outside any handler).
func (sys *System) Hold(pid Pid, closer io.Closer) (release func() bool, err error) {
	if closer == nil {
		panic("actor: Hold of a nil io.Closer")
	}
	p, err := sys.lookup(pid)
	if err != nil {
		if err == ErrNoProc && sys.halt.Load() {
			return nil, ErrStopped
		}
		return nil, err
	}
	h := &heldRes{c: closer}
	cs := p.coldNode()
	cs.mu.Lock()
	if cs.dead {
		cs.mu.Unlock()
		return nil, ErrNoProc
	}
	if cs.held == nil {
		cs.held = make(map[*heldRes]struct{})
	}
	cs.held[h] = struct{}{}
	cs.mu.Unlock()
	sys.ioCount.Add(1)
	return func() bool {
		cs.mu.Lock()
		_, ok := cs.held[h]
		delete(cs.held, h)
		cs.mu.Unlock()
		if ok {
			sys.unhold()
		}
		return ok
	}, nil
}

func (sys *System) unhold() {
	if sys.ioCount.Add(-1) == 0 {
		sys.checkIdle()
	}
}

// Transfer moves a held resource's ownership (for controlling_process): the
// old release is consumed and a new one returned. If the old owner's death
// has already taken the resource to close it, the transfer fails with
// ErrNoProc and nothing changes hands (a success would let the old owner's
// finaliser close a resource the new owner holds). A nil release or closer is a misuse and panics before anything
// changes hands.
func (sys *System) Transfer(release func() bool, to Pid, closer io.Closer) (func() bool, error) {
	if release == nil {
		panic("actor: Transfer of a nil release")
	}
	nr, err := sys.Hold(to, closer)
	if err != nil {
		return nil, err
	}
	if !release() {
		nr() // undo: the old owner's finaliser closes it
		return nil, ErrNoProc
	}
	return nr, nil
}

// closeHeld closes the resources of a dying actor (finalise).
func (sys *System) closeHeld(cs *coldState) {
	cs.mu.Lock()
	held := cs.held
	cs.held = nil
	cs.mu.Unlock()
	for h := range held {
		h.c.Close()
		sys.unhold()
	}
}

// spawnedCount is the number of successful spawns: slab allocations (counted
// per shard, under the shard's lock, so spawning touches no shared counter)
// less those whose Spawn failed after allocating.
func (sys *System) spawnedCount() uint64 {
	allocs, _ := sys.slab.Counts()
	return allocs - sys.spawnFails.Load()
}

// activations is the number of activations index c has run, its current role
// s included (the counting rule is in sched.go, above enterAct). Called
// under sys.statsMu, so no retake moves the count between its reads. The
// parts are read one after another while the holder runs on: act before
// settles (settleAct moves act, then settles), so a chain settling between
// the reads is under-counted by one, never over-counted; and the result is
// never less than the last one reported, so the counter never goes
// backwards (it read settles first and could over-count by one, then drop).
func activations(c *schedStats, s *sched) uint64 {
	act := (s.act.Load() &^ actRetired) / 2
	settles := c.settles.Load()
	n := c.activations.Load() + act
	if n < settles {
		n = 0
	} else {
		n -= settles
	}
	n = max(n, c.reported)
	c.reported = n
	return n
}
