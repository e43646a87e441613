package etf_test

import (
	"bytes"
	"math"
	"math/big"
	"reflect"
	"strings"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/etf"
	"pgregory.net/rapid"
)

// Registered types the tests use (registered once for the test binary).
type point struct{ X, Y int }

type envelope struct {
	To    actor.Pid
	Ref   etf.Ref
	Body  any
	Tags  []actor.Atom
	Data  []byte
	Name  string
	Ratio float64
	Count uint16
	Meta  map[string]int
	Big   *big.Int
	Flag  bool
	Kind  actor.Atom
	//lint:ignore U1000 never set: it is here to show Register takes an unexported field tagged "-"
	skip int `etf:"-"`
}

// single has wrapper's tag and another arity.
type single struct{ A int }

type wrapper struct {
	P      point
	Points []point
	T      etf.Tuple
}

func init() {
	etf.MustRegister[point]("etf_test_point")
	etf.MustRegister[envelope]("etf_test_envelope")
	etf.MustRegister[wrapper]("etf_test_wrapper")
	etf.MustRegister[single]("etf_test_wrapper")
}

// termEqual is equality of decoded values: Map pairs in any order,
// *big.Int by value, floats by their bits.
func termEqual(a, b any) bool {
	switch x := a.(type) {
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && (x == nil) == (y == nil) && (x == nil || x.Cmp(y) == 0)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case etf.Map:
		y, ok := b.(etf.Map)
		if !ok || len(x) != len(y) {
			return false
		}
		inOrder := true
		for i := range x {
			if !termEqual(x[i].Key, y[i].Key) || !termEqual(x[i].Value, y[i].Value) {
				inOrder = false
				break
			}
		}
		if inOrder {
			return true
		}
		if len(x) > 64 { // pairs in another order: matched below only when few
			return false
		}
		used := make([]bool, len(y))
	outer:
		for _, p := range x {
			for j, q := range y {
				if !used[j] && termEqual(p.Key, q.Key) && termEqual(p.Value, q.Value) {
					used[j] = true
					continue outer
				}
			}
			return false
		}
		return true
	case map[any]any:
		y, ok := b.(map[any]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !termEqual(v, w) {
				return false
			}
		}
		return true
	case etf.Tuple:
		y, ok := b.(etf.Tuple)
		return ok && sliceEqual(x, y)
	case []any:
		y, ok := b.([]any)
		return ok && x != nil && y != nil && sliceEqual(x, y)
	case etf.ImproperList:
		y, ok := b.(etf.ImproperList)
		return ok && sliceEqual(x.Elems, y.Elems) && termEqual(x.Tail, y.Tail)
	case etf.BitBinary:
		y, ok := b.(etf.BitBinary)
		return ok && x.Bits == y.Bits && bytes.Equal(x.Bytes, y.Bytes)
	case etf.Fun:
		y, ok := b.(etf.Fun)
		return ok && bytes.Equal(x.Raw, y.Raw)
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !va.IsValid() || !vb.IsValid() || va.Type() != vb.Type() {
		return !va.IsValid() && !vb.IsValid()
	}
	return valueEqual(va, vb)
}

func valueEqual(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if !valueEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !valueEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			w := b.MapIndex(it.Key())
			if !w.IsValid() || !valueEqual(it.Value(), w) {
				return false
			}
		}
		return true
	case reflect.Interface, reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return termEqual(a.Interface(), b.Interface())
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	}
	return a.Equal(b)
}

func sliceEqual(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !termEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// termGen draws canonical Go values of every supported kind.
type termGen struct {
	sys      *actor.System // local pids, if set
	self     etf.Node      // the node whose pids decode as local: not drawn as remote
	noFun    bool          // leave out Fun (its bytes are OTP's to re-encode)
	funs     [][]byte      // Fun raw encodings to draw from
	maxDepth int
}

var nodeNames = []actor.Atom{"a@127.0.0.1", "b@127.0.0.1", "ünïcode@127.0.0.1", "erl@localhost"}

func (g *termGen) atom(t *rapid.T, label string) actor.Atom {
	var s string
	switch rapid.IntRange(0, 9).Draw(t, label+"_kind") {
	case 0:
		s = rapid.StringOfN(rapid.Rune(), 0, 255, -1).Draw(t, label)
	case 1:
		s = strings.Repeat("é", rapid.IntRange(128, 255).Draw(t, label+"_n")) // ATOM_UTF8_EXT
	default:
		s = rapid.SampledFrom([]string{"ok", "error", "foo", "undefined", "nil", "'q'", "EXIT", ""}).Draw(t, label)
	}
	if s == "true" || s == "false" {
		s = "not_" + s
	}
	return actor.Atom(s)
}

func (g *termGen) node(t *rapid.T) actor.Atom {
	return rapid.SampledFrom(nodeNames).Draw(t, "node")
}

func (g *termGen) pid(t *rapid.T) actor.Pid {
	if g.sys != nil && rapid.Bool().Draw(t, "local") {
		return g.sys.LocalPid(rapid.Uint32().Draw(t, "id"), rapid.Uint32Range(1, math.MaxUint32).Draw(t, "serial"))
	}
	p, err := actor.RemotePid(actor.RemoteID{
		Node:     g.node(t),
		Creation: rapid.Uint32().Draw(t, "creation"),
		ID:       rapid.Uint32().Draw(t, "id"),
		Serial:   rapid.Uint32().Draw(t, "serial"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (g *termGen) ref(t *rapid.T) etf.Ref {
	r := etf.Ref{Node: g.node(t), Creation: rapid.Uint32().Draw(t, "creation"), Len: uint8(rapid.IntRange(1, 5).Draw(t, "len"))}
	for i := range int(r.Len) {
		r.Words[i] = rapid.Uint32().Draw(t, "word")
	}
	return r
}

func (g *termGen) bigInt(t *rapid.T) *big.Int {
	switch rapid.IntRange(0, 3).Draw(t, "big_kind") {
	case 0:
		return new(big.Int).Lsh(big.NewInt(1), 63) // MaxInt64+1
	case 1:
		return new(big.Int).Sub(big.NewInt(math.MinInt64), big.NewInt(1))
	}
	mag := rapid.SliceOfN(rapid.Byte(), 9, 300).Draw(t, "mag")
	mag[0] |= 1 // at least 2^64: past int64
	x := new(big.Int).SetBytes(mag)
	if rapid.Bool().Draw(t, "neg") {
		x.Neg(x)
	}
	return x
}

func (g *termGen) float(t *rapid.T) float64 {
	f := rapid.Float64().Draw(t, "float")
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0.5
	}
	return f
}

// key draws a value a Go map can hold as the term's key.
func (g *termGen) key(t *rapid.T) any {
	switch rapid.IntRange(0, 7).Draw(t, "key_kind") {
	case 0:
		return g.atom(t, "key")
	case 1:
		return rapid.Int().Draw(t, "key")
	case 2:
		return rapid.String().Draw(t, "key")
	case 3:
		return g.pid(t)
	case 4:
		return g.ref(t)
	case 5:
		return rapid.Bool().Draw(t, "key")
	case 6:
		return point{rapid.Int().Draw(t, "x"), rapid.Int().Draw(t, "y")}
	}
	f := g.float(t)
	if f == 0 {
		f = 0 // one zero only (0.0 and -0.0 are one Go key)
	}
	return f
}

func (g *termGen) term(t *rapid.T, depth int) any {
	kinds := 17
	if depth >= g.maxDepth {
		kinds = 11 // leaves only
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		return g.atom(t, "atom")
	case 1:
		return rapid.Bool().Draw(t, "bool")
	case 2:
		return rapid.Int().Draw(t, "int")
	case 3:
		return g.bigInt(t)
	case 4:
		return g.float(t)
	case 5:
		return string(rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "binary"))
	case 6:
		b := rapid.SliceOfN(rapid.Byte(), 1, 16).Draw(t, "bits")
		bits := uint8(rapid.IntRange(1, 7).Draw(t, "nbits"))
		b[len(b)-1] &= byte(0xff << (8 - bits))
		return etf.BitBinary{Bytes: b, Bits: bits}
	case 7:
		return g.pid(t)
	case 8:
		return g.ref(t)
	case 9:
		switch rapid.IntRange(0, 2).Draw(t, "other") {
		case 0:
			return etf.Port{Node: g.node(t), Creation: rapid.Uint32().Draw(t, "creation"), ID: rapid.Uint64().Draw(t, "id")}
		case 1:
			return etf.Export{Module: g.atom(t, "m"), Function: g.atom(t, "f"), Arity: rapid.Uint8().Draw(t, "arity")}
		}
		if g.noFun || len(g.funs) == 0 {
			return []any{}
		}
		return etf.Fun{Raw: rapid.SampledFrom(g.funs).Draw(t, "fun")}
	case 10:
		return point{rapid.Int().Draw(t, "x"), rapid.Int().Draw(t, "y")}
	case 11:
		n := rapid.IntRange(0, 6).Draw(t, "len")
		l := make([]any, n)
		for i := range l {
			l[i] = g.term(t, depth+1)
		}
		return l
	case 12:
		// A list OTP sends as STRING_EXT (or LIST_EXT, when long).
		b := rapid.SliceOfN(rapid.Byte(), 1, 70000).Draw(t, "string")
		l := make([]any, len(b))
		for i, c := range b {
			l[i] = int(c)
		}
		return l
	case 13:
		l := etf.ImproperList{Elems: make([]any, rapid.IntRange(1, 4).Draw(t, "len"))}
		for i := range l.Elems {
			l.Elems[i] = g.term(t, depth+1)
		}
		for {
			l.Tail = g.term(t, depth+1)
			switch l.Tail.(type) {
			case []any, etf.ImproperList:
				continue
			}
			return l
		}
	case 14:
		n := rapid.IntRange(0, 6).Draw(t, "len")
		tu := make(etf.Tuple, n)
		for i := range tu {
			tu[i] = g.term(t, depth+1)
		}
		return tu
	case 15:
		m := make(map[any]any)
		for range rapid.IntRange(0, 5).Draw(t, "len") {
			m[g.key(t)] = g.term(t, depth+1)
		}
		return m
	}
	return g.record(t, depth)
}

// record draws a registered struct or a Map (a map with a key Go cannot
// hold).
func (g *termGen) record(t *rapid.T, depth int) any {
	switch rapid.IntRange(0, 2).Draw(t, "record") {
	case 0:
		m := etf.Map{{Key: etf.Tuple{g.term(t, depth+1)}, Value: g.term(t, depth+1)}}
		for range rapid.IntRange(0, 4).Draw(t, "len") {
			k := g.term(t, depth+1)
			dup := false
			for _, p := range m {
				dup = dup || termEqual(p.Key, k)
			}
			if !dup {
				m = append(m, etf.MapPair{Key: k, Value: g.term(t, depth+1)})
			}
		}
		return m
	case 1:
		w := wrapper{P: point{1, 2}, Points: []point{}, T: etf.Tuple{g.term(t, depth+1)}}
		for range rapid.IntRange(0, 3).Draw(t, "len") {
			w.Points = append(w.Points, point{rapid.Int().Draw(t, "x"), rapid.Int().Draw(t, "y")})
		}
		return w
	}
	e := envelope{
		To:    g.pid(t),
		Ref:   g.ref(t),
		Body:  g.term(t, depth+1),
		Tags:  []actor.Atom{},
		Data:  rapid.SliceOfN(rapid.Byte(), 0, 20).Draw(t, "data"),
		Name:  rapid.String().Draw(t, "name"),
		Ratio: g.float(t),
		Count: rapid.Uint16().Draw(t, "count"),
		Meta:  map[string]int{},
		Flag:  rapid.Bool().Draw(t, "flag"),
		Kind:  g.atom(t, "kind"),
	}
	if rapid.Bool().Draw(t, "has_big") {
		e.Big = g.bigInt(t)
	}
	for range rapid.IntRange(0, 3).Draw(t, "len") {
		e.Tags = append(e.Tags, g.atom(t, "tag"))
		e.Meta[rapid.String().Draw(t, "meta")] = rapid.Int().Draw(t, "v")
	}
	return e
}
