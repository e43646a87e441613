package actor

import (
	"fmt"
	"strconv"
	"strings"
)

// Pid names one actor: one tenancy of one slot of one System, or an actor
// of another node (RemotePid). It is a small comparable value (24 bytes),
// safe to copy and to use as a map key. The zero Pid names nothing. A Pid
// stays valid after its actor dies — it then names a dead actor, never the
// slot's next tenant, because the generation differs; a remote Pid keeps
// its node identity for as long as the Pid exists (remote.go).
type Pid struct {
	// rn is a remote pid's node identity, nil for a local pid. First, so
	// that the three words after it are hashed and compared in one run.
	rn   *remoteNode
	node uint32 // the System that issued it (process-unique); remoteBit|slot for a remote pid
	idx  uint32 // slot index (a remote pid: the Erlang pid's ID)
	gen  uint32 // slot generation, never 0 for an issued pid (a remote pid: its Serial)
}

// IsZero reports whether p is the zero Pid.
func (p Pid) IsZero() bool { return p == Pid{} }

// String formats p as Erlang does: <node.index.generation>.
func (p Pid) String() string {
	return fmt.Sprintf("<%d.%d.%d>", p.node, p.idx, p.gen)
}

// ParsePid parses the String form of a local pid. It exists for
// diagnostics and tests; a parsed pid is only as good as the String it came
// from. A remote pid's String is refused (ErrBadPid): its node number is a
// slot of the identity table that is reused once nobody holds the identity,
// so the string alone cannot say which node it named (RemotePid can).
func ParsePid(s string) (Pid, error) {
	if !strings.HasPrefix(s, "<") || !strings.HasSuffix(s, ">") {
		return Pid{}, fmt.Errorf("%w: %q", ErrBadPid, s)
	}
	parts := strings.Split(s[1:len(s)-1], ".")
	if len(parts) != 3 {
		return Pid{}, fmt.Errorf("%w: %q", ErrBadPid, s)
	}
	var v [3]uint32
	for i, part := range parts {
		n, err := strconv.ParseUint(part, 10, 32)
		if err != nil {
			return Pid{}, fmt.Errorf("%w: %q", ErrBadPid, s)
		}
		v[i] = uint32(n)
	}
	if v[0]&remoteBit != 0 {
		return Pid{}, fmt.Errorf("%w: %q is a remote pid (use RemotePid)", ErrBadPid, s)
	}
	return Pid{node: v[0], idx: v[1], gen: v[2]}, nil
}

// packed is the run-queue form of a pid: index and generation in one word.
func (p Pid) packed() uint64 { return uint64(p.idx)<<32 | uint64(p.gen) }

func unpack(node uint32, v uint64) Pid {
	return Pid{node: node, idx: uint32(v >> 32), gen: uint32(v)}
}
