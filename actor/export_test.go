package actor

import (
	"fmt"
	"math/bits"
	"strings"
	"sync/atomic"
	"time"
)

// Test hooks: internals that tests drive or read directly (STYLE.md rule 10).

// WheelTick is the resolution of the timing wheel: a timer fires at most one
// tick after its deadline on an exact clock (testing/synctest).
const WheelTick = time.Duration(1) << tickShift

// IdleRoles returns how many scheduler roles have published themselves idle.
func (sys *System) IdleRoles() int {
	n := 0
	for i := range sys.idle {
		n += bits.OnesCount64(sys.idle[i].Load())
	}
	return n
}

// SlotState names the state of pid's slot word (Blocked, Parked, ...).
func (sys *System) SlotState(pid Pid) string {
	p := sys.procOf(pid)
	if p == nil {
		return "gone"
	}
	_, _, st := p.slot.Word.Snapshot()
	return st.String()
}

// WaitEpoch returns the epoch of pid's slot word: for an actor blocked in a
// wait, the epoch that wait's registrations carry.
func (sys *System) WaitEpoch(pid Pid) uint32 {
	_, e, _ := sys.procOf(pid).slot.Word.Snapshot()
	return e
}

// ArmWaitTimeout arms the timeout of a wait for (pid, epoch) after d, exactly
// as a blocking operation does, and returns the flag it sets on expiry.
func (sys *System) ArmWaitTimeout(pid Pid, epoch uint32, d time.Duration) *atomic.Bool {
	fired := new(atomic.Bool)
	sys.tm.armWait(sys, pid, epoch, int64(d), fired, nil)
	return fired
}

// ArmAfterShutdown arms a wait timeout as a Call racing Shutdown would, past
// its stopping check, and reports how many timers are then pending.
func (sys *System) ArmAfterShutdown(pid Pid) int {
	var fired atomic.Bool
	sys.tm.armWait(sys, pid, 0, int64(time.Hour), &fired, nil)
	return sys.tm.pending()
}

// RefineDue is what the timer wheel's Refine(0) answers now (wheel ticks):
// math.MaxInt64 if nothing is left to move ahead of the next coarse slot's
// start, else when Refine wants to be called (timers.Wheel.Refine).
func (sys *System) RefineDue() int64 {
	sys.tm.mu.Lock()
	defer sys.tm.mu.Unlock()
	return sys.tm.wheel.Refine(0)
}

// GroupMonitors returns the number of group monitors in force (MonitorGroup)
// in the System, of every actor and group.
func (sys *System) GroupMonitors() int { return sys.nm.groups.MonitorCount() }

// PidOf is the pid of (node, idx, gen), as a System numbered node issues it.
func PidOf(node, idx, gen uint32) Pid { return Pid{node: node, idx: idx, gen: gen} }

// RemoteSlot is the identity table's slot of a remote pid's node.
func RemoteSlot(p Pid) uint32 { return p.node &^ remoteBit }

// RemoteEntries counts the identity table's entries whose node name starts
// with prefix: the live identities, and the dead ones whose cleanup has
// not run yet.
func RemoteEntries(prefix string) int {
	n := 0
	remoteNodes.live.Range(func(k, _ any) bool {
		if strings.HasPrefix(string(k.(nodeKey).name), prefix) {
			n++
		}
		return true
	})
	return n
}

// CheckRemoteTable checks the identity table's slot accounting: every slot
// handed out is owned (count) or free, once.
func CheckRemoteTable() error {
	remoteNodes.mu.Lock()
	defer remoteNodes.mu.Unlock()
	if uint32(remoteNodes.count+len(remoteNodes.free)) != remoteNodes.next {
		return fmt.Errorf("%d owned + %d free slots != %d handed out", remoteNodes.count, len(remoteNodes.free), remoteNodes.next)
	}
	seen := make(map[uint32]bool, len(remoteNodes.free))
	for _, s := range remoteNodes.free {
		if seen[s] || s >= remoteNodes.next {
			return fmt.Errorf("free slot %d twice or never handed out (next %d)", s, remoteNodes.next)
		}
		seen[s] = true
	}
	return nil
}

// RemoteSlotsHandedOut is how many slots the identity table has ever
// handed out: its high-water mark of live identities.
func RemoteSlotsHandedOut() uint32 {
	remoteNodes.mu.Lock()
	defer remoteNodes.mu.Unlock()
	return remoteNodes.next
}
