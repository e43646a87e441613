package etf

// Map key order. OTP sends a map of at most 32 keys (a "flatmap") with its
// keys sorted in term order, and a larger one in its hash trie's order. The
// encoder sorts the keys of a small map[any]any the same way, so the same
// map always gives the same bytes, and the bytes OTP's own: numbers
// (integers before floats, as in map key order), then atoms, references,
// funs, ports, pids, tuples, binaries. Keys of the same class compare by
// value for numbers, atoms and binaries, as OTP does; others (pids, refs,
// registered structs) by their encoding, a fixed order of this package's
// own. A larger map goes out in Go's iteration order: sorting it would cost
// n log n to match no one.

import (
	"bytes"
	"cmp"
	"math"
	"math/big"
	"slices"

	"github.com/colonyrt/colony/actor"
)

// smallMapKeys is OTP's flatmap bound (MAP_SMALL_MAP_LIMIT).
const smallMapKeys = 32

// Key classes in term order.
const (
	classInt = iota
	classFloat
	classAtom
	classRef
	classFun
	classPort
	classPid
	classTuple
	classBinary
)

func keyClass(k any) int {
	switch k.(type) {
	case int, *big.Int:
		return classInt
	case float64:
		return classFloat
	case actor.Atom, bool:
		return classAtom
	case Ref:
		return classRef
	case Export:
		return classFun
	case Port:
		return classPort
	case actor.Pid:
		return classPid
	case string:
		return classBinary
	}
	return classTuple // a registered struct, or a convenience form: by encoding
}

func atomText(k any) string {
	switch a := k.(type) {
	case actor.Atom:
		return string(a)
	case bool:
		if a {
			return "true"
		}
		return "false"
	}
	return ""
}

func asBig(k any) *big.Int {
	if n, ok := k.(int); ok {
		return big.NewInt(int64(n))
	}
	return k.(*big.Int)
}

// compareKeys orders two keys of one Go map (never equal as Go values).
func compareKeys(a, b any) int {
	ca, cb := keyClass(a), keyClass(b)
	if ca != cb {
		return ca - cb
	}
	switch ca {
	case classInt:
		x, okx := a.(int)
		y, oky := b.(int)
		if okx && oky {
			return cmp.Compare(x, y)
		}
		return asBig(a).Cmp(asBig(b))
	case classFloat:
		x, y := a.(float64), b.(float64)
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
		return cmp.Compare(math.Float64bits(x), math.Float64bits(y)) // 0.0 and -0.0
	case classAtom:
		return cmp.Compare(atomText(a), atomText(b))
	case classBinary:
		return cmp.Compare(a.(string), b.(string))
	case classRef:
		x, y := a.(Ref), b.(Ref)
		return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.Creation, y.Creation),
			cmp.Compare(x.Len, y.Len), slices.Compare(x.Words[:], y.Words[:]))
	case classFun:
		x, y := a.(Export), b.(Export)
		return cmp.Or(cmp.Compare(x.Module, y.Module), cmp.Compare(x.Function, y.Function), cmp.Compare(x.Arity, y.Arity))
	case classPort:
		x, y := a.(Port), b.(Port)
		return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.Creation, y.Creation), cmp.Compare(x.ID, y.ID))
	case classPid:
		x, okx := a.(actor.Pid).Remote()
		y, oky := b.(actor.Pid).Remote()
		if okx && oky {
			return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.Creation, y.Creation),
				cmp.Compare(x.ID, y.ID), cmp.Compare(x.Serial, y.Serial))
		}
		if okx {
			return 1 // local pids first
		}
		if oky {
			return -1
		}
		return cmp.Compare(a.(actor.Pid).String(), b.(actor.Pid).String())
	}
	// A registered struct or another Go value: by its encoding (one that
	// does not encode fails the encode itself).
	s := newEncodeState(&Node{})
	defer s.release()
	x, _ := s.term(nil, a, 0)
	y, _ := s.term(nil, b, 0)
	return bytes.Compare(x, y)
}
