package mailbox

// Peek calls f with the oldest linked messages of the lane, oldest first,
// until f returns false or max messages have been seen; it removes
// nothing. Consumer only: it walks the links from tail, which only the
// consumer may do (a node behind tail is recycled by the consumer's Pop,
// so a walk from any other goroutine could follow a reused node into
// another lane). A message whose producer is between its Swap and its link
// is not seen, as Pop would not see it.
func (l *Lane) Peek(max int, f func(v any) bool) {
	n := l.tail
	for i := 0; i < max; i++ {
		next := n.next.Load() // Acquire: pairs with Push's link store
		if next == nil || !f(next.v) {
			return
		}
		n = next
	}
}

// Peek calls f with up to max of the oldest user messages, oldest first,
// without removing them; the system lane is not shown. Consumer only, as
// Pop.
func (m *Mailbox) Peek(max int, f func(v any) bool) { m.user.Peek(max, f) }
