package monitor

// smallMax is the most entries a smallMap keeps in its inline slice before it
// moves them to a Go map. Eight covers almost every actor (a worker has one or
// two links and monitors), while a supervisor with thousands of children gets
// O(1) add and remove instead of a linear scan per child exit.
const smallMax = 8

type entry[K comparable, V any] struct {
	k K
	v V
}

// smallMap maps K to V. It is a slice of pairs while it holds at most smallMax
// entries and a Go map above that; an empty smallMap holds no memory. Exactly
// one of small and big is in use: big != nil implies small == nil. Not safe
// for concurrent use: Node's mutex guards it.
type smallMap[K comparable, V any] struct {
	small []entry[K, V] // used while big == nil; unordered (removal swaps in the last entry)
	big   map[K]V
}

func (m *smallMap[K, V]) len() int {
	if m.big != nil {
		return len(m.big)
	}
	return len(m.small)
}

func (m *smallMap[K, V]) get(k K) (V, bool) {
	if m.big != nil {
		v, ok := m.big[k]
		return v, ok
	}
	for _, e := range m.small {
		if e.k == k {
			return e.v, true
		}
	}
	var zero V
	return zero, false
}

// add inserts k -> v and reports true, or reports false and changes nothing
// if k is present.
func (m *smallMap[K, V]) add(k K, v V) bool {
	if _, ok := m.get(k); ok {
		return false
	}
	switch {
	case m.big != nil:
		m.big[k] = v
	case len(m.small) < smallMax:
		m.small = append(m.small, entry[K, V]{k, v})
	default: // promote
		m.big = make(map[K]V, 2*smallMax)
		for _, e := range m.small {
			m.big[e.k] = e.v
		}
		m.big[k] = v
		m.small = nil
	}
	return true
}

// del removes k and returns its value.
func (m *smallMap[K, V]) del(k K) (V, bool) {
	var zero V
	if m.big != nil {
		v, ok := m.big[k]
		if ok {
			if delete(m.big, k); len(m.big) == 0 {
				m.big = nil // an emptied map holds no memory
			}
		}
		return v, ok
	}
	for i, e := range m.small {
		if e.k == k {
			last := len(m.small) - 1
			m.small[i] = m.small[last]
			m.small[last] = entry[K, V]{} // drop references held by the stale slot
			if m.small = m.small[:last]; last == 0 {
				m.small = nil
			}
			return e.v, true
		}
	}
	return zero, false
}

// take empties the map and returns its entries through f, in no set order.
func (m *smallMap[K, V]) take(f func(K, V)) {
	for _, e := range m.small {
		f(e.k, e.v)
	}
	for k, v := range m.big {
		f(k, v)
	}
	*m = smallMap[K, V]{}
}

// any reports whether f holds for some entry (in no set order); it stops at
// the first.
func (m *smallMap[K, V]) any(f func(K, V) bool) bool {
	for _, e := range m.small {
		if f(e.k, e.v) {
			return true
		}
	}
	for k, v := range m.big {
		if f(k, v) {
			return true
		}
	}
	return false
}
