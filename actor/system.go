package actor

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colonyrt/colony/mailbox"
	"github.com/colonyrt/colony/runqueue"
	"github.com/colonyrt/colony/slot"
)

// Actor is a behaviour: a value with a Receive method. Receive runs on a
// scheduler for one message at a time; it may keep state in its receiver
// without locks, because an actor never runs on two goroutines at once. A
// message sent happens before the Receive that handles it.
type Actor interface {
	Receive(c *Context, msg any)
}

// Initer is implemented by behaviours that want to run code before their
// first message, in the actor (Erlang's spawn function before its receive
// loop). Init runs on the actor's first activation.
type Initer interface {
	Init(c *Context)
}

// ActorFunc adapts a function to an Actor.
type ActorFunc func(c *Context, msg any)

// Receive calls f.
func (f ActorFunc) Receive(c *Context, msg any) { f(c, msg) }

var nodeSeq atomic.Uint32

// System is one actor runtime: a slab of actor slots, its schedulers, its
// timers and its registry. Create it with Start; it may not be copied. All
// methods are safe for concurrent use from any goroutine.
type System struct {
	cfg    Config
	node   uint32
	nsched int
	slab   *slot.Slab[proc]
	remote remoteRoute // sends to other nodes' pids (remote.go); nil without distribution

	roles []atomic.Pointer[sched] // current role of each index
	// statsMu orders Stats's read of each index's activations with the
	// watchdog's retake, which moves a retired role's count into the
	// index's total and installs a fresh role: read halfway, the count
	// was taken twice, then dropped (stats.go, activations).
	statsMu sync.Mutex
	stats   []schedStats
	permits []chan struct{}
	idle    []atomic.Uint64 // idle mask, one bit per role index
	global  runqueue.Global

	timekeeper atomic.Int32 // index of the parked timekeeper, -1 if none
	tkUntil    atomic.Int64 // wheel tick the parked timekeeper sleeps until

	live        atomic.Int64
	rootSeq     atomic.Uint64 // spawn order of actors spawned from outside
	spawnFails  atomic.Uint64 // slots allocated by a Spawn that then failed
	dropped     atomic.Uint64 // messages to dead actors, or left in a dead actor's mailbox
	orphaned    atomic.Uint64 // Context operations by handlers of killed actors, dropped
	lateReplies atomic.Uint64
	ioCount     atomic.Int64 // resources held by actors (Hold)
	helpers     atomic.Int64 // goroutines registered by Helper that have not exited

	// The aborts of HelperWithAbort goroutines that have not exited, and
	// whether Shutdown has called them (a helper registered after that is
	// aborted at once). Guarded by helperMu, a leaf: the aborts are called
	// after it is released.
	helperMu      sync.Mutex
	helperAborts  map[*helperRec]struct{}
	helperAborted bool

	workers  sync.WaitGroup
	nworkers atomic.Int64
	spareMu  sync.Mutex
	spares   []*worker // guarded by spareMu
	halted   bool      // guarded by spareMu

	halt     atomic.Bool // workers must exit
	stopping atomic.Bool // no new roots (spawns from outside)
	// sealed: no spawns at all, from actors either. Set by Shutdown's last
	// step, before it kills what is left: until then the actors it has not
	// stopped yet run as usual, and a supervisor among them restarts a
	// child as OTP's does while an older tree drains (refusing spawns from
	// actors from the start of Shutdown would leave a crash during the
	// ordered stop unrestarted).
	sealed atomic.Bool
	// shutting is set by the first Shutdown, which closes shutDone when
	// it returns; every other Shutdown waits for that (or its own ctx).
	shutting atomic.Bool
	shutDone chan struct{}
	shutErr  error // the first Shutdown's result; written before shutDone closes
	// spawning counts Spawns past their stopping check and not yet
	// published, per slab shard (one cache line each: a shared counter
	// would be a line every spawn on every scheduler fights over). Shutdown
	// sets stopping and then waits for every count to reach 0 (Dekker with
	// spawn's increment-then-check), so its scan of the slab sees every
	// actor a Spawn that did not fail with ErrStopped made.
	spawning []paddedCount

	idleMu      sync.Mutex
	idleWaiters []chan struct{} // guarded by idleMu

	// liveRoots counts actors spawned from outside (proc.seq != 0) not yet
	// released; Shutdown waits for it to reach 0 after signalling them.
	liveRoots atomic.Int64

	tm timerState
	nm names

	obs observeState // observation counters and sampling (observe.go)

	wdStop chan struct{}
	// heldMu guards heldReports, the rate limit of the reports of handlers
	// that returned on a retired role (watchdog.go, retaken).
	heldMu      sync.Mutex
	heldReports retakeReports
	wdDone      chan struct{}
}

// Start starts a System. The zero Config is valid.
func Start(cfg Config) (*System, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	sys := &System{
		shutDone: make(chan struct{}),
		cfg:      cfg,
		node:     nodeSeq.Add(1),
		nsched:   cfg.Schedulers,
		slab:     slot.NewSlabShards[proc](cfg.MaxActors, cfg.Schedulers+1),
		roles:    make([]atomic.Pointer[sched], cfg.Schedulers),
		stats:    make([]schedStats, cfg.Schedulers),
		permits:  make([]chan struct{}, cfg.Schedulers),
		idle:     make([]atomic.Uint64, (cfg.Schedulers+63)/64),
		spawning: make([]paddedCount, cfg.Schedulers+1),
	}
	sys.timekeeper.Store(-1)
	sys.tm.init()
	sys.nm.init(sys.tellGroupMonitor)
	sys.obs.init(cfg.Schedulers)
	for i := range sys.roles {
		sys.permits[i] = make(chan struct{}, 1)
		sys.roles[i].Store(newSched(sys, i, &sys.stats[i], sys.permits[i]))
	}
	for i := range sys.roles {
		sys.startWorker(sys.roles[i].Load())
	}
	if cfg.WatchdogThreshold > 0 {
		sys.wdStop = make(chan struct{})
		sys.wdDone = make(chan struct{})
		go sys.watchdog()
	}
	return sys, nil
}

// Node returns the System's node number, which its pids carry.
func (sys *System) Node() uint32 { return sys.node }

// lookup returns the live proc named by pid, or an error: ErrBadPid for a
// pid this System never issued, ErrNoProc for a dead one.
func (sys *System) lookup(pid Pid) (*proc, error) {
	if pid.node != sys.node || pid.gen == 0 {
		return nil, ErrBadPid
	}
	sl := sys.slab.At(pid.idx)
	if sl == nil {
		return nil, ErrBadPid
	}
	p := sl.Rec()
	if p == nil || p.pid != pid || p.exit.Load() != alive {
		return nil, ErrNoProc
	}
	return p, nil
}

// SpawnOption configures Spawn.
type SpawnOption func(*spawnOpts)

type spawnOpts struct {
	name   string
	named  bool
	trap   bool
	bound  int
	link   bool
	parent *proc
	// monitor makes the parent monitor the child from birth
	// (spawn_monitor); spawn writes the monitor's ref to ref.
	monitor bool
	ref     Ref
	// ack: the child owes its starter an InitAck (StartActor, StartLink).
	ack *initAck
	// watch, from outside the system, watches the child from birth, as
	// monitor does for a parent (StartServer's, as proc_lib's spawn
	// with a monitor).
	watch *Watch
}

// watchFromBirth is the spawn option of a Watch made with the child.
func watchFromBirth(w *Watch) SpawnOption { return func(o *spawnOpts) { o.watch = w } }

// testHookSpawnMonitored, if set, runs in a SpawnMonitor right after the
// monitor is made and before the child is published (tests kill the parent
// there).
var testHookSpawnMonitored atomic.Pointer[func()]

// testHookSpawnInstall, if set, runs in a spawn that succeeded, after the
// child is published and before its slot word is installed (tests send to
// it or kill it there).
var testHookSpawnInstall atomic.Pointer[func(child Pid)]

// testHookSpawnFailed, if set, runs in a spawn that failed after its child
// was published, before the child is killed (tests kill it there first).
var testHookSpawnFailed atomic.Pointer[func(child Pid)]

// Name registers the new actor under name, atomically with the spawn: if
// the name is taken, Spawn fails with ErrNameTaken and no actor is started.
func Name(name string) SpawnOption { return func(o *spawnOpts) { o.name, o.named = name, true } }

// TrapExit starts the actor trapping exits (see Context.TrapExit).
func TrapExit() SpawnOption { return func(o *spawnOpts) { o.trap = true } }

// MailboxBound bounds the actor's mailbox: a Send that finds n messages
// queued fails with ErrMailboxFull (and the message is not queued). Exit and
// Down messages are never refused. Default (and n == 0): unbounded, as in
// Erlang. With a negative n, Spawn fails with ErrBadOption and starts
// nothing (it was taken silently as unbounded, turning off the
// back-pressure a bound computed wrong was meant to give).
func MailboxBound(n int) SpawnOption { return func(o *spawnOpts) { o.bound = n } }

// Spawn starts an actor running a. The actor is runnable at once; Spawn
// happens before a's Init and first Receive. Errors: ErrNilBehaviour for a
// nil behaviour or a typed nil pointer, ErrBadBehaviour for a method named
// as an optional callback with the wrong signature (an Init that returns an
// error, the Server's), ErrBadName, ErrBadOption, ErrNameTaken,
// ErrTooManyActors, ErrStopped.
func (sys *System) Spawn(a Actor, opts ...SpawnOption) (Pid, error) {
	o := applySpawnOpts(opts)
	return sys.spawn(nil, a, &o)
}

// paddedCount is a counter alone on its cache line.
type paddedCount struct {
	n atomic.Int64
	_ [56]byte
}

// applySpawnOpts runs opts on a fresh spawnOpts. The options are closures
// the compiler cannot see into, so the struct they write escapes: it is
// heap-allocated only when there are options (a plain Spawn allocates
// nothing but the actor's record).
func applySpawnOpts(opts []SpawnOption) spawnOpts {
	if len(opts) == 0 {
		return spawnOpts{}
	}
	o := new(spawnOpts)
	for _, f := range opts {
		f(o)
	}
	return *o
}

func (sys *System) spawn(w *worker, a Actor, o *spawnOpts) (Pid, error) {
	if err := checkActor(a); err != nil {
		return Pid{}, err
	}
	if o.named && o.name == "" {
		return Pid{}, ErrBadName
	}
	if o.bound < 0 {
		return Pid{}, fmt.Errorf("%w: MailboxBound(%d) is negative", ErrBadOption, o.bound)
	}
	shard := sys.shardOf(w)
	inflight := &sys.spawning[shard].n
	inflight.Add(1)
	defer inflight.Add(-1)
	if sys.sealed.Load() || o.parent == nil && sys.stopping.Load() {
		return Pid{}, ErrStopped
	}
	idx, sl, ok := sys.slab.Alloc(shard)
	if !ok {
		return Pid{}, ErrTooManyActors
	}
	// We own the vacant slot.
	gen, _, _ := sl.Word.Snapshot()
	p := &proc{sys: sys, pid: Pid{node: sys.node, idx: idx, gen: gen}, slot: sl, beh: a}
	p.mbox.Init(o.bound)
	if o.ack != nil {
		p.x().ack = o.ack // before the child can run: owner-only from then on
	}
	// The empty mailbox, for the re-check after a parked install.
	fresh := p.mbox.Marks()
	if o.trap { // the zero value is false; every atomic write on this path is a locked instruction
		p.flags.set(flagTrap, true)
	}
	link := o.link && o.parent != nil
	var err error
	if link {
		// Both halves of the link before the child can be found (by its
		// record or its name), so that whoever kills the child finds the
		// parent's half and signals it (spawn_link is atomic). The child's
		// half first: once the parent's half exists, the parent's finaliser
		// must find the child's half to signal it.
		p.coldNode().addLink(o.parent.pid)
		if !o.parent.coldNode().addLink(p.pid) {
			// The parent (the caller) was killed: no child of a dead actor
			// ever runs.
			err = ErrNoProc
		}
	}
	mon := o.monitor && o.parent != nil && err == nil
	if mon {
		// The monitor before the child can be found, as the link above:
		// made after the spawn (Spawn, then Monitor), it lost the race
		// with a child that exits at once, and the parent got noproc
		// instead of the child's reason, which spawn_monitor always
		// gives (tests/testdata/erlang/links/spawn_monitor_crash). The
		// child's node is fresh, so AddMonitor succeeds; AddWatching fails
		// only if the parent was killed, and then, as in monitor, the
		// monitor is taken back.
		o.ref = sys.newRef()
		p.coldNode().node.AddMonitor(uint64(o.ref), peer{pid: o.parent.pid})
		if !o.parent.coldNode().node.AddWatching(uint64(o.ref), peer{pid: p.pid}) {
			p.cold.Load().node.RemoveMonitor(uint64(o.ref))
			mon = false
		} else if h := testHookSpawnMonitored.Load(); h != nil {
			(*h)()
		}
	}
	if o.watch != nil && err == nil {
		// As the monitor above, before the child can be found: a Watch
		// made after the spawn lost the race with a child that exits at
		// once, and said noproc instead of its reason.
		o.watch.ref = sys.newRef()
		p.coldNode().node.AddMonitor(uint64(o.watch.ref), peer{call: o.watch.cell})
		o.watch.target = p
	}
	if o.parent == nil {
		p.seq = sys.rootSeq.Add(1)
		sys.liveRoots.Add(1)
	}
	// Publish the record. From here on the child goes through the ordinary
	// lifecycle even if the spawn fails: a failed spawn's child is born
	// dead (finalised at once, never run), and the owner that pops it
	// reclaims the slot and decrements the live count as for any death.
	sl.SetRec(p)
	sys.live.Add(1)
	if err == nil && link && o.parent.exit.Load() != alive && p.cold.Load().node.RemoveLink(peer{pid: o.parent.pid}) {
		// The parent was killed after its half was made; its finaliser
		// may have looked the child up before the record was published
		// and skipped it. As in link: whichever of us and that finaliser
		// removes the child's half resolves the link; we did, so the
		// child is born dead. (Seq-cst: a latch still alive here means
		// the finaliser's lookup comes after SetRec and finds the child.)
		err = ErrNoProc
	}
	if mon && o.parent.exit.Load() != alive {
		// The parent was killed after AddWatching; its finaliser may have
		// looked the child up before the record was published and skipped
		// it, leaving the monitor of a dead watcher on the child for its
		// whole life (Info's Monitors would count it). As for
		// the link above: a latch still alive here means the finaliser's
		// lookup comes after SetRec and removes it; otherwise we do (both
		// may: RemoveMonitor is idempotent). No Down is owed to the dead.
		p.cold.Load().node.RemoveMonitor(uint64(o.ref))
		mon = false
	}
	if err == nil && o.name != "" {
		// As Register, atomic with the child's death: someone may already
		// have found and killed it through its published record, and then
		// the name is moot (the spawn still succeeds, as in Erlang).
		if err = sys.registerCold(p.coldNode(), o.name, p.pid); err == ErrNoProc {
			err = nil
		}
		if err != nil && link {
			// Undo the parent's half first, or the child's death would
			// signal the caller. If the parent's finaliser took it, it
			// signals the child, which dies anyway.
			o.parent.coldNode().node.RemoveLink(peer{pid: p.pid})
		}
	}
	if err != nil {
		if h := testHookSpawnFailed.Load(); h != nil {
			(*h)(p.pid)
		}
		if mon {
			// No Down for a spawn that failed: the caller never sees the
			// ref. If someone killed the published child first, its
			// finaliser took the monitor and the Down is on its way: it is
			// dropped on arrival (a stray Down reached the handler). The
			// parent is the caller, so we own its ext.
			if !p.cold.Load().node.RemoveMonitor(uint64(o.ref)) {
				o.parent.x().suppress(o.ref)
			}
			o.parent.coldNode().node.RemoveWatching(uint64(o.ref))
		}
		sys.spawnFails.Add(1)
		sys.terminate(w, p, Killed)
	}
	if h := testHookSpawnInstall.Load(); h != nil && err == nil {
		(*h)(p.pid)
	}
	if _, hasInit := a.(Initer); hasInit || err != nil {
		// Init must run (or a born-dead child be reclaimed): queue it.
		sl.Word.Install() // Release: publishes p's fields to whoever pops it.
		sys.ready(w, p.pid, false)
	} else {
		// Nothing to run until a message or signal comes: born parked, as
		// if it had run once and found its mailbox empty, without the run
		// queue push and the activation that would find nothing to do.
		// The park protocol's re-check (proc.go): a sender or killer that
		// found the record before this CAS saw the word Vacant and woke
		// nobody; we look at the mailbox and the exit latch after it (the
		// finaliser latches exit before its WakeAny), so either they saw
		// Parked or we see what they did. Both may: one WakeMsg wins.
		gen := sl.Word.InstallParked() // Release, as Install
		if (p.mbox.ChangedSince(fresh) || p.exit.Load() != alive) && sl.Word.WakeMsg(gen) == slot.Enqueue {
			sys.ready(w, p.pid, false)
		}
	}
	if err != nil {
		return Pid{}, err
	}
	return p.pid, nil
}

// Send delivers msg to pid's mailbox. Messages from one sender arrive in the
// order sent. Sending to a dead actor is not an error: the message is
// dropped and counted (Stats.Dropped), as in Erlang. Errors: ErrBadPid for a
// malformed pid, ErrMailboxFull for a full bounded mailbox, ErrStopped after
// Shutdown.
func (sys *System) Send(pid Pid, msg any) error {
	return sys.send(nil, pid, msg)
}

func (sys *System) send(w *worker, pid Pid, msg any) error {
	return sys.sendWith(w, wcache(w), pid, msg)
}

// sendWith is send with the node cache nc, which the caller owns.
func (sys *System) sendWith(w *worker, nc *mailbox.Cache, pid Pid, msg any) error {
	if sys.cfg.det != nil && sys.detSend(pid, msg) {
		return nil // in flight until a step boundary (det.go)
	}
	p, err := sys.lookup(pid)
	if err != nil {
		return sys.sendRemote(w, pid, msg, err)
	}
	if err := p.mbox.Send(msg, nc); err != nil {
		if err == mailbox.ErrClosed { // the actor died meanwhile
			sys.dropped.Add(1)
			return nil
		}
		return ErrMailboxFull
	}
	if sys.obs.on.Load() {
		sys.sent(w, p) // a latency sample, one send in 64 (observe.go)
	}
	if p.slot.Word.WakeMsg(pid.gen) == slot.Enqueue {
		sys.ready(w, pid, true)
	}
	return nil
}

// Deliver queues msg for pid as Send does, in order with the caller's other
// messages, but it is never refused by the mailbox bound (MailboxBound), as
// Down and Exit messages are not. It is for services whose own flow control
// bounds what they send: io's sockets (one Data per SetActive(Once), N per
// N) and the wake-ups of a blocked Recv, which a bounded owner would
// otherwise lose without a trace. Errors as Send's, but for ErrMailboxFull.
func (sys *System) Deliver(pid Pid, msg any) error { return sys.deliverPid(nil, pid, msg) }

// deliverPid is Deliver from outside the schedulers, with the node cache
// nc, which the caller owns (nil: none).
func (sys *System) deliverPid(nc *mailbox.Cache, pid Pid, msg any) error {
	p, err := sys.lookup(pid)
	if err != nil {
		return sys.unsent(err)
	}
	sys.deliverWith(nil, nc, p, msg)
	return nil
}

// unsent is what Send and Deliver return when lookup failed with err: a
// message to a dead pid is dropped and counted, as in Erlang (ErrStopped
// once the System has halted); a malformed pid is ErrBadPid.
func (sys *System) unsent(err error) error {
	if err == ErrNoProc {
		sys.dropped.Add(1)
		if sys.halt.Load() {
			return ErrStopped
		}
		return nil
	}
	return err
}

// deliver queues a signal-as-message (Down, Exit, ReceiveTimeout) that must
// not be refused by a bound, and wakes the actor.
func (sys *System) deliver(w *worker, p *proc, msg any) {
	sys.deliverWith(w, wcache(w), p, msg)
}

// deliverWith is deliver with the node cache nc, which the caller owns.
func (sys *System) deliverWith(w *worker, nc *mailbox.Cache, p *proc, msg any) {
	if sys.cfg.det != nil {
		sys.detFlushTo(p.pid) // messages in flight to p first (det.go)
	}
	if p.mbox.Deliver(msg, nc) != nil {
		sys.dropped.Add(1)
		return
	}
	if p.slot.Word.WakeMsg(p.pid.gen) == slot.Enqueue {
		sys.ready(w, p.pid, false)
	}
}

// signal queues a control signal on the system lane and wakes the actor.
func (sys *System) signalProc(w *worker, p *proc, sig any) {
	p.mbox.Signal(sig)
	if p.slot.Word.WakeMsg(p.pid.gen) == slot.Enqueue {
		sys.ready(w, p.pid, false)
	}
}

// Alive reports whether pid names a live actor.
func (sys *System) Alive(pid Pid) bool {
	_, err := sys.lookup(pid)
	return err == nil
}

// checkIdle wakes Wait callers if nothing is left to run.
func (sys *System) checkIdle() {
	if !sys.isIdle() {
		return
	}
	sys.idleMu.Lock()
	ws := sys.idleWaiters
	sys.idleWaiters = nil
	sys.idleMu.Unlock()
	for _, ch := range ws {
		close(ch)
	}
}

func (sys *System) isIdle() bool {
	return sys.live.Load() == 0 && !sys.tm.armed.Load() && sys.ioCount.Load() == 0 && sys.helpers.Load() == 0
}

// Helper registers a goroutine that a package built on the System runs for
// it outside any actor (netio's poller) and returns the func that goroutine
// calls as it exits (once; later calls do nothing). Until then Wait counts
// it as work left, and Shutdown, once the last actor is gone, waits for it
// within its ctx, so nothing the System started outlives Shutdown. The
// goroutine must exit on its own once the actors' resources are closed.
func (sys *System) Helper() (exited func()) { return sys.HelperWithAbort(nil) }

// HelperWithAbort is Helper for a goroutine whose work can outlast the
// actors: netio's poller goes on writing out the output queued on sockets
// that were closed, or whose owners died, before it closes them. Shutdown
// lets it finish within its ctx; if ctx ends first, Shutdown calls abort
// (once, on Shutdown's goroutine, perhaps while the goroutine is exiting of
// its own accord or even after it has called exited: Shutdown takes the
// aborts and then calls them, so abort must be harmless then), which must
// make the goroutine drop what is left and exit promptly, and then waits
// for it a little longer (helperAbortGrace). A
// goroutine registered after Shutdown has aborted the others has its abort
// called at once, before HelperWithAbort returns. A nil abort is Helper.
func (sys *System) HelperWithAbort(abort func()) (exited func()) {
	if err := sys.detRefuse("System.Helper"); err != nil {
		panic(err.Error() + " (io's sockets cannot run in it)") // det.go
	}
	sys.helpers.Add(1)
	var h *helperRec
	if abort != nil {
		h = &helperRec{abort}
		sys.helperMu.Lock()
		late := sys.helperAborted
		if !late {
			if sys.helperAborts == nil {
				sys.helperAborts = make(map[*helperRec]struct{})
			}
			sys.helperAborts[h] = struct{}{}
		}
		sys.helperMu.Unlock()
		if late {
			abort()
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if h != nil {
				sys.helperMu.Lock()
				delete(sys.helperAborts, h)
				sys.helperMu.Unlock()
			}
			if sys.helpers.Add(-1) == 0 {
				sys.checkIdle()
			}
		})
	}
}

type helperRec struct{ abort func() }

// helperAbortGrace bounds Shutdown's wait for Helper goroutines once their
// aborts have been called. An abort is prompt (netio's is an eventfd write,
// then closing the sockets that were still being written out); the bound is
// for a goroutine that ignores it, which is then left behind as a handler
// that never returns is.
const helperAbortGrace = time.Second

// abortHelpers calls the abort of every HelperWithAbort goroutine still
// running, once, and makes later registrations abort at once.
func (sys *System) abortHelpers() {
	sys.helperMu.Lock()
	sys.helperAborted = true
	hs := sys.helperAborts
	sys.helperAborts = nil
	sys.helperMu.Unlock()
	for h := range hs {
		h.abort()
	}
}

// Wait blocks until the System has nothing left to do — no live actor, no
// pending timer, no open IO registration, no Helper goroutine — or ctx is
// done.
func (sys *System) Wait(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	for {
		ch := make(chan struct{})
		sys.idleMu.Lock()
		sys.idleWaiters = append(sys.idleWaiters, ch)
		sys.idleMu.Unlock()
		// Re-check after registering: a drop to idle before registration
		// would not have closed ch.
		if sys.isIdle() {
			return nil
		}
		select {
		case <-ch:
			if sys.isIdle() {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Shutdown stops the System in order: no new actors; every actor spawned
// from outside the System (the roots of its supervision trees) gets an exit
// signal with reason Shutdown, newest first, so a trapping supervisor stops
// its children in order, and one that traps exits is waited for before the
// next older root is told (OTP stops applications in reverse start order,
// each to its end); then the actors left get Shutdown too, first those
// linked to no live actor (an actor linked to a live one is being stopped
// through its link, as a supervisor under a plain root stops its children
// in order), the rest once nothing has exited for a second; once no actor is
// left, or ctx is done, the rest are killed, pending timers are cancelled,
// the schedulers stop, and Shutdown
// waits (within ctx) for Helper goroutines such as netio's poller, which
// writes out the output still queued on the closed sockets; when ctx ends
// first, it aborts them (HelperWithAbort: the poller discards what is left
// and resets those connections) and waits a moment for them to exit. It
// returns ctx's error if a Helper had to be aborted, and if actors were
// still live when ctx ended (a handler that never returns cannot be
// stopped; its goroutine is abandoned) an error that wraps ctx's error
// (errors.Is finds it) and names them: the root it waited for first, then
// up to five more, each with its registered name, behaviour type, whether
// it traps exits and what its handler was doing (blocked where, for a wait
// that began during Shutdown), and how many more were left. Shutdown is
// idempotent: a call during or after the first waits until the first has
// returned (or its own ctx is done) and returns what the first returned.
func (sys *System) Shutdown(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext // before anything: the System keeps running
	}
	if !sys.shutting.CompareAndSwap(false, true) {
		// Not the first: wait for the first to finish, Helper goroutines
		// included (returning once the first had halted the workers would
		// let a caller go on while they still run). shutErr is written
		// before shutDone closes.
		select {
		case <-sys.shutDone:
			return sys.shutErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := sys.shutdown(ctx)
	sys.shutErr = err
	close(sys.shutDone)
	return err
}

// shutdown is the first Shutdown's work (see Shutdown).
func (sys *System) shutdown(ctx context.Context) error {
	sys.stopping.Store(true)
	// Handlers that block from here on are labelled with their pid, so that
	// an error naming the actors left alive says where (shutdown_alive.go).
	defer sys.ObserveStacks()()
	sys.awaitSpawns()
	// 1. The roots, newest first: supervision trees stop top-down, in order,
	// one tree at a time. A root that traps exits (a supervisor: it stops
	// its children before it exits) is waited for before the next older
	// root is told, as OTP stops applications in reverse start order, each
	// to its end: a front end started last could otherwise still be calling
	// a back end started first while that stopped (every root was signalled
	// at once). Roots that do not trap die at once and are not waited for.
	// The roots are found by a scan of the slab (a spawn keeps no shared
	// set of roots: that was the spawn workload's hottest lock).
	type root struct {
		pid Pid
		seq uint64
	}
	var roots []root
	sys.eachLive(func(p *proc) {
		if p.seq != 0 {
			roots = append(roots, root{p.pid, p.seq})
		}
	})
	sort.Slice(roots, func(i, j int) bool { return roots[i].seq > roots[j].seq })
	var err error
	var waited Pid // the root whose exit ctx ended the wait for
	for _, r := range roots {
		if err = sys.stopRoot(ctx, r.pid); err != nil {
			waited = r.pid
			break
		}
	}
	if err == nil {
		err = sys.waitCond(ctx, func() bool { return sys.liveRoots.Load() == 0 })
	}
	// 2. Whatever is left (actors whose parent died before them): Shutdown
	// to each, in the order stopOrphans explains.
	if err == nil && sys.live.Load() > 0 {
		err = sys.stopOrphans(ctx)
	}
	// 3. Out of time, or actors that trap and ignore Shutdown: Kill. No
	// spawn from here on, so the kill's scan of the slab finds every actor.
	sys.sealed.Store(true)
	sys.awaitSpawns()
	if err != nil {
		err = sys.aliveError(err, waited) // before the kill: who was left
	}
	if err != nil || sys.live.Load() > 0 {
		sys.signalAll(Kill)
		grace, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		sys.waitCond(grace, func() bool { return sys.live.Load() == 0 })
		cancel()
	}
	sys.tm.cancelAll(sys)
	sys.stopWorkers(ctx)
	// 4. Goroutines run for the System by packages built on it (Helper:
	// netio's poller) exit once the resources they serve are closed, which
	// the actors' deaths did: wait for them too (else they outlive Shutdown
	// by a moment, with their fds, and a leak check after it fails). Their
	// work may outlast the actors (the poller writes out the output queued
	// on closed sockets, as OTP's ports do): it gets what is left of ctx,
	// and then they are aborted and given a moment to exit, so that
	// Shutdown returns with no goroutine and no fd left even then.
	helpersGone := func() bool { return sys.helpers.Load() == 0 }
	if herr := sys.waitCond(ctx, helpersGone); herr != nil {
		sys.abortHelpers()
		grace, cancel := context.WithTimeout(context.Background(), helperAbortGrace)
		sys.waitCond(grace, helpersGone)
		cancel()
		if err == nil {
			err = herr
		}
	}
	sys.checkIdle()
	return err
}

// awaitSpawns waits until every Spawn past its stopping (or sealed) check
// has published its actor: a scan of the slab after it sees them all.
func (sys *System) awaitSpawns() {
	for i := range sys.spawning {
		for sys.spawning[i].n.Load() != 0 {
			runtime.Gosched() // a Spawn between its check and its publication
		}
	}
}

// stopRoot sends root the Shutdown exit signal and, if it traps exits,
// waits until it has exited or ctx is done (Shutdown's first step). The wait
// is a monitor from outside (a Watch): woken by the root's death, not by
// polling.
func (sys *System) stopRoot(ctx context.Context, root Pid) error {
	p := sys.procOf(root)
	if p == nil || !p.flags.has(flagTrap) {
		sys.exitSignal(nil, Pid{}, root, Shutdown)
		return nil
	}
	w, err := sys.Monitor(root)
	if err != nil {
		return nil // halted meanwhile: nothing left to stop
	}
	sys.exitSignal(nil, Pid{}, root, Shutdown)
	select {
	case <-w.Done():
		return nil
	case <-ctx.Done():
		w.Stop()
		return ctx.Err()
	}
}

// orphanGrace is how long Shutdown's second step lets the live count stand
// still, while actors linked to live actors are being stopped through their
// links, before it signals those too (stopOrphans). It bounds the order it
// keeps: a supervisor's child that takes longer than this to stop lets the
// signal reach its remaining siblings out of order (200 ms is too short for
// a child flushing its state: 400 ms has been measured breaking it). It
// costs at most this much more at Shutdown, and only where actors are
// linked among themselves with no live way out.
const orphanGrace = time.Second

// stopOrphans is Shutdown's second step: the roots are gone, and what is
// left gets Shutdown, but not all at once. An actor linked to a live actor
// is, as a rule, being stopped through that link: a supervisor whose root
// was a plain actor (it died at once) stops its children one by one in
// reverse order, and a signal to every actor at once killed its
// non-trapping children out of that order. So only
// actors linked to no live actor are signalled, again whenever the live
// count has moved (a peer that exited normally leaves its linked actors
// alive and now unlinked); the rest only once the count has stood still
// for orphanGrace (actors linked only among themselves would otherwise
// never be told); after that, every actor spawned meanwhile, at once. Each
// actor is signalled at most once.
func (sys *System) stopOrphans(ctx context.Context) error {
	signalled := make(map[Pid]bool)
	signal := func(all bool) {
		sys.eachLive(func(p *proc) {
			if signalled[p.pid] {
				return
			}
			if !all {
				if cs := p.cold.Load(); cs != nil && cs.node.AnyLink(func(q peer) bool { return sys.Alive(q.pid) }) {
					return
				}
			}
			signalled[p.pid] = true
			sys.exitSignal(nil, Pid{}, p.pid, Shutdown)
		})
	}
	// The actors not stopped yet may spawn (until step 3 seals the
	// System), so a spawn also calls for a new look, after the signal to
	// all too: a child spawned unlinked by an actor handling that signal
	// would never be told, and Shutdown would wait for it until ctx ended
	// (TestShutdownStopsActorSpawnedAtOrphanSignal). The count is read
	// before the spawns in flight are waited out and the slab scanned, so
	// a spawn it counts is published by the scan, and a later one changes
	// it.
	all := false
	last, spawned := sys.live.Load(), sys.spawnedCount()
	sys.awaitSpawns()
	signal(all)
	moved := time.Now()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		n, s := sys.live.Load(), sys.spawnedCount()
		switch {
		case n == 0:
			return nil
		case n != last || s != spawned:
			if n != last {
				last, moved = n, time.Now()
			}
			spawned = s
			sys.awaitSpawns()
			signal(all)
		case !all && time.Since(moved) >= orphanGrace:
			all = true
			signal(all)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			if sys.live.Load() == 0 {
				return nil
			}
			return ctx.Err()
		}
	}
}

// eachLive calls f for every live actor's record (a racy snapshot: actors
// spawned or dying meanwhile may be missed or included).
func (sys *System) eachLive(f func(p *proc)) {
	for i := 0; i < sys.slab.Cap(); i++ {
		sl := sys.slab.At(uint32(i))
		if sl == nil {
			break
		}
		if p := sl.Rec(); p != nil && p.exit.Load() == alive {
			f(p)
		}
	}
}

// waitCond waits until cond holds or ctx is done. It is woken by checkIdle
// and re-polls every few milliseconds (the conditions it serves change
// without a notification of their own).
func (sys *System) waitCond(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		ch := make(chan struct{})
		sys.idleMu.Lock()
		sys.idleWaiters = append(sys.idleWaiters, ch)
		sys.idleMu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			if cond() {
				return nil
			}
			return ctx.Err()
		}
	}
	return nil
}

// signalAll sends an exit signal with reason to every live actor.
func (sys *System) signalAll(reason Reason) {
	sys.eachLive(func(p *proc) { sys.exitSignal(nil, Pid{}, p.pid, reason) })
}

// stopWorkers halts the schedulers and waits for their goroutines.
func (sys *System) stopWorkers(ctx context.Context) {
	if sys.wdStop != nil {
		close(sys.wdStop)
		<-sys.wdDone
	}
	sys.halt.Store(true)
	sys.spareMu.Lock()
	sys.halted = true
	spares := sys.spares
	sys.spares = nil
	sys.spareMu.Unlock()
	for _, w := range spares {
		w.resume <- nil
	}
	sys.wakeAll()
	done := make(chan struct{})
	go func() { sys.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// A handler that never returns keeps its goroutine; give the rest a
		// moment and move on.
		select {
		case <-done:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Log writes one report of kind OtherReport whose Text is the formatted
// line, as System.Report writes it (to Config.Reporter, if set, and to
// Config.Logger): for packages and services built on the System, so that a
// service's reports all reach one place. For typed fields, call Report.
func (sys *System) Log(format string, args ...any) {
	sys.Report(Report{Kind: OtherReport, Text: fmt.Sprintf(format, args...)})
}

// logCrash writes one crash report: one Logger call, the stack of a panic
// included, so concurrent reports cannot interleave their lines (a line and
// then the stack, in two calls, could).
func (sys *System) logCrash(pid Pid, r Reason) {
	rep := Report{Kind: CrashReport, Context: "exited", Pid: pid, Reason: r}
	who := sys.nameReport(&rep)
	switch x := r.(type) {
	case Panic:
		rep.Stack = x.Stack
	case replacedReason:
		// The exit reason heads the report; the reason Terminate replaced
		// follows, each with its stack if a panic.
		rep.Reason, rep.Replaced = x.exit, x.was
		rep.Stack = fmt.Sprintf("%s(Terminate replaced the reason the server was stopping with: %v)%s",
			stackLines(x.exit, "", "\n"), x.was, stackLines(x.was, "\n", ""))
	}
	rep.Text = fmt.Sprintf("actor %s exited: %v", who, rep.Reason)
	sys.Report(rep)
}

// nameReport sets rep.Name to rep.Pid's registered name, if it has one
// (registered_name, as OTP's crash report), and returns how the report's
// text names the actor: "name <pid>", or the pid.
func (sys *System) nameReport(rep *Report) string {
	name, ok := sys.nm.reg.NameOf(rep.Pid)
	if !ok {
		return rep.Pid.String()
	}
	rep.Name = name
	return name + " " + rep.Pid.String()
}

// stackLines is a panic reason's stack between before and after, for a
// report; "" for any other reason.
func stackLines(r Reason, before, after string) string {
	if p, ok := r.(Panic); ok {
		return before + p.Stack + after
	}
	return ""
}

// newRef returns a fresh, process-unique reference.
func (sys *System) newRef() Ref { return Ref(refSeq.Add(1)) }

var refSeq atomic.Uint64
