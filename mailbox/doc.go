// Package mailbox is an actor's mailbox: a lock-free multi-producer
// single-consumer FIFO lane (Vyukov's queue) for messages, optionally
// bounded, plus a system lane for control signals. Per-sender order is kept;
// sends never block. See lane.go for the ordering argument.
package mailbox
