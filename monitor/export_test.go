package monitor

// SetLast starts a Refs at an arbitrary point, e.g. near wrap-around.
func (r *Refs) SetLast(v uint64) { r.last.Store(v) }

// SmallMax is the promotion threshold of the sets, exported for tests.
const SmallMax = smallMax

// checkRep panics if a Node's sets break the smallMap representation invariant.
func (n *Node[P]) checkRep() {
	n.mu.Lock()
	defer n.mu.Unlock()
	checkSmallMap(&n.links)
	checkSmallMap(&n.monitors)
	checkSmallMap(&n.watching)
	if n.closed && n.links.len()+n.monitors.len()+n.watching.len() != 0 {
		panic("closed node holds entries")
	}
}

func checkSmallMap[K comparable, V any](m *smallMap[K, V]) {
	switch {
	case m.big != nil && m.small != nil:
		panic("smallMap: both representations in use")
	case m.big != nil && len(m.big) == 0:
		panic("smallMap: empty map kept")
	case len(m.small) > smallMax:
		panic("smallMap: slice over smallMax")
	case m.small != nil && len(m.small) == 0:
		panic("smallMap: empty slice kept")
	}
	seen := map[K]bool{}
	for _, e := range m.small {
		if seen[e.k] {
			panic("smallMap: duplicate key")
		}
		seen[e.k] = true
	}
}

// Sizes returns the number of links, monitors and watches.
func (n *Node[P]) Sizes() (links, monitors, watching int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.links.len(), n.monitors.len(), n.watching.len()
}
