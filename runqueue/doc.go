// Package runqueue holds Colony's run queues: a per-scheduler ring with
// work stealing (Go's runq design), a global queue, and the runnext slot.
// Entries are packed pids (pointer-free). See runqueue.go.
package runqueue
