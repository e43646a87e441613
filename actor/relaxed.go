package actor

// relaxed is a word with one writer whose readers tolerate a stale value:
// the watchdog's view of a role's activation counter, a proc's messages
// handled as Info reports it. On amd64 every Go atomic store is an XCHG
// (a full barrier, ~20 cycles); the hot path paid three of them per message
// for numbers nobody synchronises on. A plain word write is enough there:
// the Go memory model gives a racy read of a value no larger than a machine
// word some value actually written (never a torn one), and every reader
// here polls or is advisory. Race builds use atomics instead, so the race
// detector stays quiet and keeps checking everything else.
//
// The word is a uintptr, so on 32-bit platforms the count wraps at 2^32.
// Only the single writer may Store; anyone may Load.
type relaxed struct{ v uintptr }

// Load reads the word.
func (r *relaxed) Load() uint64 { return uint64(r.load()) }

// Store writes the word (the single writer only).
func (r *relaxed) Store(v uint64) { r.store(uintptr(v)) }
