package observer

import (
	"container/heap"
	"math/bits"
	"sort"
	"sync"
	"time"

	"github.com/colonyrt/colony/actor"
)

// The process table.
//
// Sorting a million actors by mailbox length needs a look at every one, so
// the sorted views come from a full scan (actor.System.Scan, lock-free),
// which keeps the top cfg.topN actors of each sort key in a heap (recon's
// proc_count) and the mailbox-length distribution. A scan runs at most
// once per cfg.scanGap, however many requests ask (they share the last
// one, or wait for the one in progress), so the observer's work on a
// System of n actors is one O(n) pass a second at most, and its memory
// O(topN) plus 20 bytes per slot for the rates.
//
// "Handled per window" is the messages an actor took since the previous
// scan: the scanner keeps, per slot index, the pid seen there and its
// handled count, and a row's rate is its count less the one kept if the
// pid matches (a new tenant of the slot counts from zero). The whole
// table, unsorted, is paged in slot order by cursor, straight from Scan.

// sortKeys are the sort keys of the process table.
var sortKeys = []string{"mailbox", "rate", "handled", "memory", "state"}

// row is one actor in a scan.
type row struct {
	pid     actor.Pid
	slot    int
	state   string
	mailbox int
	handled uint64
	rate    uint64
	memory  int
	trap    bool
}

// stateRank orders states for the "state" sort: the busiest first.
func stateRank(s string) int {
	switch s {
	case actor.StateRunning:
		return 4
	case actor.StateNotified:
		return 3
	case actor.StateQueued:
		return 2
	case actor.StateBlocked:
		return 1
	}
	return 0
}

// keyOf is r's sort value under sort key k (an index of sortKeys):
// higher sorts first. The state sort ranks the busiest states first, then
// the longer mailbox.
func keyOf(k int, r *row) uint64 {
	switch k {
	case 0:
		return uint64(r.mailbox)
	case 1:
		return r.rate
	case 2:
		return r.handled
	case 3:
		return uint64(r.memory)
	}
	return uint64(stateRank(r.state))<<56 | uint64(min(r.mailbox, 1<<56-1))
}

// ranked is a row and its sort value.
type ranked struct {
	v uint64
	r row
}

// topHeap is a min-heap (the worst of the top at the root) of at most n
// rows under one key. A row whose value does not beat the root costs one
// compare, so a scan of n actors is O(n) while the top is settled.
type topHeap struct {
	key  int
	n    int
	rows []ranked
}

func (h *topHeap) Len() int           { return len(h.rows) }
func (h *topHeap) Less(i, j int) bool { return h.rows[i].v < h.rows[j].v }
func (h *topHeap) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *topHeap) Push(x any)         { h.rows = append(h.rows, x.(ranked)) }
func (h *topHeap) Pop() any {
	x := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return x
}

func (h *topHeap) offer(r *row) {
	v := keyOf(h.key, r)
	if len(h.rows) < h.n {
		heap.Push(h, ranked{v, *r})
		return
	}
	if v > h.rows[0].v {
		h.rows[0] = ranked{v, *r}
		heap.Fix(h, 0)
	}
}

// sorted returns the rows best first; ties keep slot order.
func (h *topHeap) sorted() []row {
	rs := append([]ranked(nil), h.rows...)
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].v != rs[j].v {
			return rs[i].v > rs[j].v
		}
		return rs[i].r.slot < rs[j].r.slot
	})
	out := make([]row, len(rs))
	for i := range rs {
		out[i] = rs[i].r
	}
	return out
}

// mailboxBuckets are the upper bounds of the mailbox-length distribution
// the scan reports: powers of two (0, 1, 2-3, 4-7, ... 65536-131071), so
// that one actor with a few hundred messages has a bucket of its own
// beside a million idle ones; the last bucket holds the rest. A length n
// falls in bucket bits.Len(n).
var mailboxBuckets = func() []int {
	b := []int{0}
	for k := 1; k <= 17; k++ {
		b = append(b, 1<<k-1)
	}
	return b
}()

// snapshot is one full scan.
type snapshot struct {
	at      time.Time
	window  time.Duration // since the previous scan; 0 for the first
	took    time.Duration
	total   int
	states  map[string]int
	mailbox []int // counts per mailboxBuckets, then the rest
	queued  int   // messages in all mailboxes
	handled uint64
	rateSum uint64
	top     map[string][]row
}

// scanner makes snapshots, one at a time, at most one per gap.
type scanner struct {
	mu   sync.Mutex // held for a whole scan: requests in the meantime wait for it
	last *snapshot
	// per slot: the pid seen there by the last scan and its handled count
	// (20 bytes a slot)
	pids    []actor.Pid
	handled []uint64
	prevAt  time.Time
}

// stateNames index the scan's state counts.
var stateNames = []string{actor.StateParked, actor.StateBlocked, actor.StateQueued, actor.StateNotified, actor.StateRunning}

// snapshot returns a scan no older than gap, making one if needed.
func (o *observer) snapshot() *snapshot {
	sc := &o.scan
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.last != nil && time.Since(sc.last.at) < o.cfg.scanGap {
		return sc.last
	}
	start := time.Now()
	s := &snapshot{at: start, states: map[string]int{}, mailbox: make([]int, len(mailboxBuckets)+1), top: map[string][]row{}}
	if !sc.prevAt.IsZero() {
		s.window = start.Sub(sc.prevAt)
	}
	heaps := make([]*topHeap, len(sortKeys))
	for i := range sortKeys {
		heaps[i] = &topHeap{key: i, n: o.cfg.topN}
	}
	var states [5]int
	o.sys.Scan(0, 0, func(st actor.ActorStat) bool {
		r := row{pid: st.Pid, slot: st.Slot, state: st.State, mailbox: st.MailboxLen, handled: st.Handled, memory: st.Memory, trap: st.TrapExit}
		r.rate = sc.rateOf(st)
		s.total++
		states[stateRank(st.State)]++
		s.queued += st.MailboxLen
		s.handled += st.Handled
		s.rateSum += r.rate
		s.mailbox[min(bits.Len(uint(st.MailboxLen)), len(mailboxBuckets))]++
		for _, h := range heaps {
			h.offer(&r)
		}
		return true
	})
	for i, h := range heaps {
		s.top[sortKeys[i]] = h.sorted()
	}
	for i, n := range states {
		if n > 0 {
			s.states[stateNames[i]] = n
		}
	}
	s.took = time.Since(start)
	sc.prevAt = start
	sc.last = s
	return s
}

// rateOf is the messages st's actor took since the last scan, recording
// its count for the next. Under sc.mu.
func (sc *scanner) rateOf(st actor.ActorStat) uint64 {
	i := st.Slot
	if i >= len(sc.pids) {
		n := max(2*len(sc.pids), i+1, 1024)
		sc.pids = append(sc.pids, make([]actor.Pid, n-len(sc.pids))...)
		sc.handled = append(sc.handled, make([]uint64, n-len(sc.handled))...)
	}
	var rate uint64
	if sc.pids[i] == st.Pid && st.Handled >= sc.handled[i] {
		rate = st.Handled - sc.handled[i]
	} else if !sc.prevAt.IsZero() {
		rate = st.Handled // spawned since the last scan
	}
	sc.pids[i], sc.handled[i] = st.Pid, st.Handled
	return rate
}

// rateSince is, for a row of the unsorted table, the messages taken since
// the last scan, without recording anything (0 if no scan saw it).
func (sc *scanner) rateSince(st actor.ActorStat) uint64 {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	i := st.Slot
	if i >= len(sc.pids) || sc.pids[i] != st.Pid || st.Handled < sc.handled[i] {
		return 0
	}
	return st.Handled - sc.handled[i]
}
