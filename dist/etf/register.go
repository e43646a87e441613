package etf

// Registered Go types, and the reflection that encodes Go values of types
// the fast type switch in encodeState.term does not name.
//
// A registered struct type travels as the tagged tuple {Tag, F1, ..., Fn}:
// what an Erlang programmer writes for a record-like message, and matches
// with {Tag, A, B}. Registration builds the type's plan once (its fields'
// indices, checked to have a term form); encoding walks the plan with
// reflect.Value accessors, and decoding first decodes the tuple as any
// other and then converts its elements by the plan, so a tuple that has the
// tag and arity but an element the field cannot take stays a Tuple: the
// decoder never loses a well-formed term.
//
// The registry is a copy-on-write snapshot behind an atomic pointer:
// Register is rare (package init) and takes a mutex; every encode and
// decode loads the snapshot once and reads it without locks.

import (
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/colonyrt/colony/actor"
)

// ErrRegistered: Register was called for a type or a (tag, arity) that is
// registered already.
var ErrRegistered = errors.New("etf: already registered")

type plan struct {
	typ    reflect.Type
	tag    actor.Atom
	fields []int // indices of the struct's fields, in tuple order
}

type tagArity struct {
	tag   actor.Atom
	arity int // the tuple's size: 1 + the number of fields
}

type registry struct {
	byType map[reflect.Type]*plan
	byTag  map[tagArity]*plan
}

var (
	registerMu sync.Mutex               // serializes Register
	registered atomic.Pointer[registry] // nil until the first Register; never mutated after Store
)

// Register makes the struct type T travel as the tuple {tag, F1, ..., Fn} of
// its exported fields in declaration order, each encoded by the same rules
// as any value; a field tagged `etf:"-"` is left out (and zero when
// decoded). A decoded tuple whose first element is tag and whose size is
// 1+n becomes a T (a value, not a pointer) when every element converts to
// its field's type (see the package doc); otherwise it stays a Tuple.
// Encoding accepts T and *T.
//
// Field types: any, bool, the integer and float kinds, string (a binary;
// a charlist is also accepted when decoding), actor.Atom, []byte, slices,
// arrays and maps of field types, *big.Int, actor.Pid, the types of this
// package, and other registered struct types.
//
// Register is meant for package initialization; it is safe to call at any
// time from any goroutine. A term decoded before a Register call that
// registers its tag stays a Tuple.
func Register[T any](tag actor.Atom) error {
	return register(reflect.TypeFor[T](), tag)
}

// MustRegister is Register that panics on error, for package-level var
// declarations and init functions.
func MustRegister[T any](tag actor.Atom) {
	if err := Register[T](tag); err != nil {
		panic(err)
	}
}

func register(t reflect.Type, tag actor.Atom) error {
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("%w: Register of %v: not a struct type", ErrUnsupported, t)
	}
	if known[t] {
		return fmt.Errorf("%w: Register of %v: it has a term form of its own", ErrUnsupported, t)
	}
	if tag == "" || tag == "true" || tag == "false" || !utf8.ValidString(string(tag)) ||
		utf8.RuneCountInString(string(tag)) > MaxAtomChars {
		return fmt.Errorf("%w: Register of %v: tag %q cannot tag a tuple", ErrUnsupported, t, tag)
	}
	p := &plan{typ: t, tag: tag}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("etf") == "-" {
			continue
		}
		if !f.IsExported() {
			return fmt.Errorf("%w: Register of %v: field %s is unexported (tag it `etf:\"-\"` to leave it out)",
				ErrUnsupported, t, f.Name)
		}
		if err := fieldType(f.Type, 0); err != nil {
			return fmt.Errorf("Register of %v: field %s: %w", t, f.Name, err)
		}
		p.fields = append(p.fields, i)
	}
	ta := tagArity{tag, 1 + len(p.fields)}

	registerMu.Lock()
	defer registerMu.Unlock()
	old := registered.Load()
	if old == nil {
		old = &registry{}
	}
	if _, ok := old.byType[t]; ok {
		return fmt.Errorf("%w: type %v", ErrRegistered, t)
	}
	if q, ok := old.byTag[ta]; ok {
		return fmt.Errorf("%w: tag %s with arity %d (by %v)", ErrRegistered, tag, ta.arity, q.typ)
	}
	r := &registry{
		byType: make(map[reflect.Type]*plan, len(old.byType)+1),
		byTag:  make(map[tagArity]*plan, len(old.byTag)+1),
	}
	for k, v := range old.byType {
		r.byType[k] = v
	}
	for k, v := range old.byTag {
		r.byTag[k] = v
	}
	r.byType[t], r.byTag[ta] = p, p
	registered.Store(r) // publishes r, built above and never written again
	return nil
}

var (
	atomType   = reflect.TypeFor[actor.Atom]()
	bigPtrType = reflect.TypeFor[*big.Int]()
	tupleType  = reflect.TypeFor[Tuple]()
)

// known are the struct and slice types with a term form of their own.
var known = map[reflect.Type]bool{
	reflect.TypeFor[actor.Pid]():    true,
	reflect.TypeFor[Ref]():          true,
	reflect.TypeFor[Port]():         true,
	reflect.TypeFor[BitBinary]():    true,
	reflect.TypeFor[Export]():       true,
	reflect.TypeFor[Fun]():          true,
	reflect.TypeFor[ImproperList](): true,
	reflect.TypeFor[Map]():          true,
	reflect.TypeFor[MapPair]():      false,
	reflect.TypeFor[big.Int]():      true,
	tupleType:                       true,
	reflect.TypeFor[[]any]():        true,
	reflect.TypeFor[map[any]any]():  true,
}

// fieldType checks that t has a term form a field can carry.
func fieldType(t reflect.Type, depth int) error {
	if depth > 16 {
		return fmt.Errorf("%w: type %v nests too deep", ErrUnsupported, t)
	}
	if known[t] || t == bigPtrType {
		return nil
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return nil
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return nil
		}
	case reflect.Slice, reflect.Array:
		return fieldType(t.Elem(), depth+1)
	case reflect.Map:
		if err := fieldType(t.Key(), depth+1); err != nil {
			return err
		}
		return fieldType(t.Elem(), depth+1)
	case reflect.Struct:
		return nil // must be registered by the time a value is encoded
	}
	return fmt.Errorf("%w: type %v has no term form", ErrUnsupported, t)
}

// reflectTerm encodes a value the type switch of term does not name.
func (s *encodeState) reflectTerm(dst []byte, rv reflect.Value, depth int) ([]byte, error) {
	if !rv.IsValid() {
		return appendAtom(dst, "undefined"), nil
	}
	switch rv.Kind() {
	case reflect.Interface:
		if rv.IsNil() {
			return appendAtom(dst, "undefined"), nil
		}
		return s.term(dst, rv.Interface(), depth)
	case reflect.Bool:
		if rv.Bool() {
			return appendAtom(dst, "true"), nil
		}
		return appendAtom(dst, "false"), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return appendInt(dst, rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return appendUint(dst, rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return appendFloat(dst, rv.Float())
	case reflect.String:
		if rv.Type() == atomType {
			return appendAtomChecked(dst, actor.Atom(rv.String()))
		}
		return appendBinary(dst, rv.String()), nil
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return appendBinary(dst, rv.Bytes()), nil
		}
		if known[rv.Type()] {
			return s.term(dst, rv.Interface(), depth)
		}
		return s.reflectList(dst, rv, depth)
	case reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(b), rv)
			return appendBinary(dst, b), nil
		}
		return s.reflectList(dst, rv, depth)
	case reflect.Map:
		return s.reflectMap(dst, rv, depth)
	case reflect.Pointer:
		if rv.IsNil() {
			return appendAtom(dst, "undefined"), nil
		}
		if rv.Elem().Kind() == reflect.Struct {
			return s.reflectTerm(dst, rv.Elem(), depth)
		}
	case reflect.Struct:
		if known[rv.Type()] {
			return s.term(dst, rv.Interface(), depth)
		}
		if r := registered.Load(); r != nil {
			if p := r.byType[rv.Type()]; p != nil {
				return s.record(dst, p, rv, depth)
			}
		}
		return dst, unsupported("struct type %v is not registered", rv.Type())
	}
	return dst, unsupported("Go type %v has no term form", rv.Type())
}

// record appends a registered struct's tuple.
func (s *encodeState) record(dst []byte, p *plan, rv reflect.Value, depth int) ([]byte, error) {
	if depth > DefaultMaxDepth {
		return dst, fmt.Errorf("%w: Go value nested deeper than %d", ErrTooDeep, DefaultMaxDepth)
	}
	dst = appendAtom(appendTupleHeader(dst, 1+len(p.fields)), string(p.tag))
	var err error
	for _, i := range p.fields {
		if dst, err = s.value(dst, rv.Field(i), depth+1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// value appends a field or element value.
func (s *encodeState) value(dst []byte, rv reflect.Value, depth int) ([]byte, error) {
	switch rv.Kind() {
	case reflect.Int, reflect.Int64:
		return appendInt(dst, rv.Int()), nil
	case reflect.String:
		if rv.Type() == atomType {
			return appendAtomChecked(dst, actor.Atom(rv.String()))
		}
		return appendBinary(dst, rv.String()), nil
	case reflect.Interface:
		if rv.IsNil() {
			return appendAtom(dst, "undefined"), nil
		}
		return s.term(dst, rv.Interface(), depth)
	}
	if depth > DefaultMaxDepth {
		return dst, fmt.Errorf("%w: Go value nested deeper than %d", ErrTooDeep, DefaultMaxDepth)
	}
	if rv.CanInterface() {
		return s.term(dst, rv.Interface(), depth)
	}
	return s.reflectTerm(dst, rv, depth)
}

func (s *encodeState) reflectList(dst []byte, rv reflect.Value, depth int) ([]byte, error) {
	n := rv.Len()
	if n == 0 {
		return append(dst, tagNil), nil
	}
	if n <= 0xffff && smallIntElems(rv) {
		dst = append(dst, tagString, byte(n>>8), byte(n))
		for i := range n {
			el := rv.Index(i)
			if el.CanInt() {
				dst = append(dst, byte(el.Int()))
			} else {
				dst = append(dst, byte(el.Uint()))
			}
		}
		return dst, nil
	}
	dst = append(dst, tagList, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	var err error
	for i := range n {
		if dst, err = s.value(dst, rv.Index(i), depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, tagNil), nil
}

// smallIntElems reports whether rv's elements are integers in 0..255 (a
// list OTP sends as STRING_EXT).
func smallIntElems(rv reflect.Value) bool {
	switch rv.Type().Elem().Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		for i := range rv.Len() {
			if v := rv.Index(i).Int(); v < 0 || v > 255 {
				return false
			}
		}
		return true
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		for i := range rv.Len() {
			if rv.Index(i).Uint() > 255 {
				return false
			}
		}
		return true
	}
	return false
}

func (s *encodeState) reflectMap(dst []byte, rv reflect.Value, depth int) ([]byte, error) {
	n := rv.Len()
	dst = append(dst, tagMap, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	var err error
	it := rv.MapRange()
	for it.Next() {
		if dst, err = s.value(dst, it.Key(), depth+1); err != nil {
			return dst, err
		}
		if dst, err = s.value(dst, it.Value(), depth+1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// fromTuple converts a decoded tuple to the registered type of its tag and
// arity, if any, and if every element converts.
func (r *registry) fromTuple(tag actor.Atom, t Tuple) (any, bool) {
	p := r.byTag[tagArity{tag, len(t)}]
	if p == nil {
		return nil, false
	}
	rv := reflect.New(p.typ).Elem()
	for j, i := range p.fields {
		if !assign(rv.Field(i), t[j+1], 0) {
			return nil, false
		}
	}
	return rv.Interface(), true
}

// assign stores the decoded value v in dst, converting it to dst's type;
// false if v has no form of that type (an atom for an int field, an int out
// of the field's range, ...).
func assign(dst reflect.Value, v any, depth int) bool {
	if depth > DefaultMaxDepth {
		return false
	}
	t := dst.Type()
	vt := reflect.TypeOf(v)
	if vt == t {
		dst.Set(reflect.ValueOf(v))
		return true
	}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() != 0 || v == nil {
			return false
		}
		dst.Set(reflect.ValueOf(v))
		return true
	case reflect.Bool:
		b, ok := v.(bool)
		dst.SetBool(b)
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(int)
		if !ok || dst.OverflowInt(int64(n)) {
			return false
		}
		dst.SetInt(int64(n))
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var u uint64
		switch n := v.(type) {
		case int:
			if n < 0 {
				return false
			}
			u = uint64(n)
		case *big.Int:
			if !n.IsUint64() {
				return false
			}
			u = n.Uint64()
		default:
			return false
		}
		if dst.OverflowUint(u) {
			return false
		}
		dst.SetUint(u)
		return true
	case reflect.Float32, reflect.Float64:
		f, ok := v.(float64)
		if !ok || dst.OverflowFloat(f) {
			return false
		}
		dst.SetFloat(f)
		return true
	case reflect.String:
		if t == atomType {
			switch a := v.(type) {
			case actor.Atom:
				dst.SetString(string(a))
			case bool:
				dst.SetString(map[bool]string{true: "true", false: "false"}[a])
			default:
				return false
			}
			return true
		}
		switch x := v.(type) {
		case string:
			dst.SetString(x)
			return true
		case []any:
			s, ok := charlist(x)
			dst.SetString(s)
			return ok
		}
		return false
	case reflect.Pointer:
		if t != bigPtrType {
			return false
		}
		switch n := v.(type) {
		case actor.Atom:
			if n != "undefined" { // a nil *big.Int went out as undefined
				return false
			}
			dst.SetZero()
			return true
		case int:
			dst.Set(reflect.ValueOf(big.NewInt(int64(n))))
			return true
		case *big.Int:
			dst.Set(reflect.ValueOf(n))
			return true
		}
		return false
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if s, ok := v.(string); ok {
				b := reflect.MakeSlice(t, len(s), len(s))
				reflect.Copy(b, reflect.ValueOf(s))
				dst.Set(b)
				return true
			}
		}
		if t == tupleType {
			// A registered struct where the field wants the plain tuple.
			return assignTuple(dst, v)
		}
		l, ok := v.([]any)
		if !ok {
			return false
		}
		sl := reflect.MakeSlice(t, len(l), len(l))
		for i, el := range l {
			if !assign(sl.Index(i), el, depth+1) {
				return false
			}
		}
		dst.Set(sl)
		return true
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			if s, ok := v.(string); ok {
				if len(s) != t.Len() {
					return false
				}
				reflect.Copy(dst, reflect.ValueOf(s))
				return true
			}
		}
		l, ok := v.([]any)
		if !ok || len(l) != t.Len() {
			return false
		}
		for i, el := range l {
			if !assign(dst.Index(i), el, depth+1) {
				return false
			}
		}
		return true
	case reflect.Map:
		var pairs Map
		switch m := v.(type) {
		case map[any]any:
			pairs = make(Map, 0, len(m))
			for k, v := range m {
				pairs = append(pairs, MapPair{k, v})
			}
		case Map:
			pairs = m
		default:
			return false
		}
		mv := reflect.MakeMapWithSize(t, len(pairs))
		k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		for _, p := range pairs {
			k.SetZero()
			e.SetZero()
			if !assign(k, p.Key, depth+1) || !assign(e, p.Value, depth+1) || !k.Comparable() {
				return false
			}
			mv.SetMapIndex(k, e)
		}
		if mv.Len() != len(pairs) {
			return false
		}
		dst.Set(mv)
		return true
	}
	return false
}

// assignTuple stores in a Tuple field the tuple of a decoded registered
// struct v.
func assignTuple(dst reflect.Value, v any) bool {
	r := registered.Load()
	rv := reflect.ValueOf(v)
	if r == nil || !rv.IsValid() {
		return false
	}
	p := r.byType[rv.Type()]
	if p == nil {
		return false
	}
	t := make(Tuple, 1+len(p.fields))
	t[0] = p.tag
	for j, i := range p.fields {
		t[j+1] = rv.Field(i).Interface()
	}
	dst.Set(reflect.ValueOf(t))
	return true
}

// charlist converts an Erlang string (a list of Unicode code points) to a Go
// string.
func charlist(l []any) (string, bool) {
	b := make([]byte, 0, len(l))
	for _, el := range l {
		c, ok := el.(int)
		if !ok || c < 0 || c > utf8.MaxRune || (c >= 0xd800 && c < 0xe000) {
			return "", false
		}
		b = utf8.AppendRune(b, rune(c))
	}
	return string(b), true
}

// comparableValue reports whether a decoded registered struct can be a Go
// map key.
func comparableValue(k any) bool {
	return reflect.ValueOf(k).Comparable()
}
