package actor

import "github.com/colonyrt/colony/mailbox"

// A Feeder sends into a System from one goroutine outside it (a plain
// goroutine feeding actors, a service's event loop such as io's poller),
// reusing the mailbox nodes its messages travel in. A message sent with
// System.Send from outside the system takes a new node every time, and the
// node becomes garbage once the actor has handled it; a Feeder takes its
// nodes from a cache of its own, which the schedulers refill with the nodes
// they are done with (mailbox.Cache), so a steady stream through a Feeder
// allocates nothing but the messages themselves.
//
// A Feeder is for one goroutine at a time: it is not safe for concurrent
// use (hand it from goroutine to goroutine only with something that orders
// the hand-off, such as a channel). Its methods are System.Send,
// SendName and Deliver, with their semantics and errors; it is a Sender
// (Cast, CastName). Inside a handler, use
// the Context's Send, which already reuses its scheduler's nodes.
type Feeder struct {
	sys *System
	nc  mailbox.Cache
}

// NewFeeder returns a Feeder into sys.
func (sys *System) NewFeeder() *Feeder { return &Feeder{sys: sys} }

// Send is System.Send.
func (s *Feeder) Send(pid Pid, msg any) error { return s.sys.sendWith(nil, &s.nc, pid, msg) }

// SendName is System.SendName.
func (s *Feeder) SendName(name string, msg any) error { return s.sys.sendNameWith(&s.nc, name, msg) }

// Deliver is System.Deliver: as Send, but never refused by a mailbox bound.
func (s *Feeder) Deliver(pid Pid, msg any) error { return s.sys.deliverPid(&s.nc, pid, msg) }
