package actor

import (
	"fmt"
	"strconv"
	"strings"
)

// Pid names one actor: one tenancy of one slot of one System. It is a small
// comparable value, safe to copy and to use as a map key. The zero Pid names
// nothing. A Pid stays valid after its actor dies — it then names a dead
// actor, never the slot's next tenant, because the generation differs.
type Pid struct {
	node uint32 // the System that issued it (process-unique)
	idx  uint32 // slot index
	gen  uint32 // slot generation; never 0 for an issued pid
}

// IsZero reports whether p is the zero Pid.
func (p Pid) IsZero() bool { return p == Pid{} }

// String formats p as Erlang does: <node.index.generation>.
func (p Pid) String() string {
	return fmt.Sprintf("<%d.%d.%d>", p.node, p.idx, p.gen)
}

// ParsePid parses the String form. It exists for diagnostics and tests; a
// parsed pid is only as good as the String it came from.
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
	return Pid{node: v[0], idx: v[1], gen: v[2]}, nil
}

// packed is the run-queue form of a pid: index and generation in one word.
func (p Pid) packed() uint64 { return uint64(p.idx)<<32 | uint64(p.gen) }

func unpack(node uint32, v uint64) Pid {
	return Pid{node: node, idx: uint32(v >> 32), gen: uint32(v)}
}
