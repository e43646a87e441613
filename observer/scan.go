package observer

import (
	"container/heap"
	"hash/maphash"
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
// O(topN) plus 12 bytes per slot for the rates.
//
// "Handled per window" is the messages an actor took since the previous
// scan: the scanner keeps, per slot index, a hash of the pid and its
// handled count, and a row's rate is its count less the one kept if the
// hash matches (a new tenant of the slot starts from zero). The whole
// table, unsorted, is paged in slot order by cursor, straight from Scan.

// sortKeys are the sort keys of the process table.
var sortKeys = []string{"mailbox", "rate", "handled", "memory", "state"}

// row is one actor in a scan.
type row struct {
	pid     actor.Pid
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

// less reports whether a sorts before b under key, descending (the top
// first); ties go to the older slot, as the scan met them.
func less(key string, a, b *row) bool {
	switch key {
	case "mailbox":
		return a.mailbox > b.mailbox
	case "rate":
		return a.rate > b.rate
	case "handled":
		return a.handled > b.handled
	case "memory":
		return a.memory > b.memory
	case "state":
		ra, rb := stateRank(a.state), stateRank(b.state)
		if ra != rb {
			return ra > rb
		}
		return a.mailbox > b.mailbox
	}
	return false
}

// topHeap is a min-heap (the worst of the top at the root) of at most n
// rows under key.
type topHeap struct {
	key  string
	n    int
	rows []row
}

func (h *topHeap) Len() int           { return len(h.rows) }
func (h *topHeap) Less(i, j int) bool { return less(h.key, &h.rows[j], &h.rows[i]) }
func (h *topHeap) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *topHeap) Push(x any)         { h.rows = append(h.rows, x.(row)) }
func (h *topHeap) Pop() any {
	x := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return x
}

func (h *topHeap) offer(r *row) {
	if len(h.rows) < h.n {
		heap.Push(h, *r)
		return
	}
	if less(h.key, r, &h.rows[0]) {
		h.rows[0] = *r
		heap.Fix(h, 0)
	}
}

// sorted returns the rows best first.
func (h *topHeap) sorted() []row {
	out := append([]row(nil), h.rows...)
	sort.SliceStable(out, func(i, j int) bool { return less(h.key, &out[i], &out[j]) })
	return out
}

// mailboxBuckets are the upper bounds of the mailbox-length distribution
// the scan reports (the last bucket holds the rest).
var mailboxBuckets = []int{0, 1, 10, 100, 1000, 10000, 100000}

// snapshot is one full scan.
type snapshot struct {
	at       time.Time
	window   time.Duration // since the previous scan; 0 for the first
	took     time.Duration
	total    int
	states   map[string]int
	mailbox  []int // counts per mailboxBuckets, then the rest
	queued   int   // messages in all mailboxes
	handled  uint64
	rateSum  uint64
	top      map[string][]row
	maxSlots int
}

// scanner makes snapshots, one at a time, at most one per gap.
type scanner struct {
	mu   sync.Mutex // held for a whole scan: requests in the meantime wait for it
	last *snapshot
	seed maphash.Seed
	// per slot: the hash of the pid seen there and its handled count
	hashes  []uint32
	handled []uint64
	prevAt  time.Time
}

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
	for i, k := range sortKeys {
		heaps[i] = &topHeap{key: k, n: o.cfg.topN}
	}
	o.sys.Scan(0, 0, func(st actor.ActorStat) bool {
		r := row{pid: st.Pid, state: st.State, mailbox: st.MailboxLen, handled: st.Handled, memory: st.Memory, trap: st.TrapExit}
		r.rate = sc.rateOf(st)
		s.total++
		s.states[st.State]++
		s.queued += st.MailboxLen
		s.handled += st.Handled
		s.rateSum += r.rate
		b := sort.SearchInts(mailboxBuckets, st.MailboxLen)
		s.mailbox[b]++
		for _, h := range heaps {
			h.offer(&r)
		}
		return true
	})
	for _, h := range heaps {
		s.top[h.key] = h.sorted()
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
	if i >= len(sc.hashes) {
		n := max(2*len(sc.hashes), i+1, 1024)
		sc.hashes = append(sc.hashes, make([]uint32, n-len(sc.hashes))...)
		sc.handled = append(sc.handled, make([]uint64, n-len(sc.handled))...)
	}
	h := uint32(maphash.Comparable(sc.seed, st.Pid)) | 1 // 0 means no actor seen
	var rate uint64
	if sc.hashes[i] == h && st.Handled >= sc.handled[i] {
		rate = st.Handled - sc.handled[i]
	} else if !sc.prevAt.IsZero() {
		rate = st.Handled // spawned since the last scan
	}
	sc.hashes[i], sc.handled[i] = h, st.Handled
	return rate
}

// rateSince is, for a row of the unsorted table, the messages taken since
// the last scan, without recording anything (0 if no scan saw it).
func (sc *scanner) rateSince(st actor.ActorStat) uint64 {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	i := st.Slot
	if i >= len(sc.hashes) || sc.hashes[i] != uint32(maphash.Comparable(sc.seed, st.Pid))|1 || st.Handled < sc.handled[i] {
		return 0
	}
	return st.Handled - sc.handled[i]
}
