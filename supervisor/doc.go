// Package supervisor is OTP's supervisor behaviour for Colony: supervision
// trees of actors that restart their children when they die.
//
// A supervisor is an actor (an actor.Server that traps exits) described by
// a Spec: a Strategy (OneForOne, OneForAll, RestForOne, SimpleOneForOne),
// a restart intensity (Intensity restarts in Period, OTP's default 1 in
// 5 s; one more stops the supervisor with reason actor.Shutdown, which its
// own supervisor sees), an AutoShutdown rule for significant children, and
// ChildSpecs started in order and stopped in reverse order. Each ChildSpec
// has an ID, a StartFunc (ServerStart for an actor.Server, Child for a
// nested supervisor), a Restart type (Permanent, Transient, Temporary), a
// Shutdown (BrutalKill, a timeout, Infinity) and a Type.
//
//	sup, err := supervisor.Start(sys, supervisor.Spec{
//		Strategy: supervisor.OneForOne,
//		Children: []supervisor.ChildSpec{
//			{ID: "db", Start: supervisor.ServerStart(newDB)},
//			supervisor.Child("workers", workersSpec),
//		},
//	})
//
// Run starts a tree from main and stops it in order on SIGINT or SIGTERM.
//
// The package uses only actor's public API. Supervisor semantics follow
// OTP 25 and are checked against a real Erlang node (tests/).
//
// Happens-before: a StartFunc's child is started (its Init has returned)
// before the next child's StartFunc runs; a child is stopped (its Down was
// seen) before the next child in reverse order is signalled; Start and
// StartLink return after every child has started.
package supervisor
