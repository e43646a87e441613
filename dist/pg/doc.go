// Package pg is Erlang's pg (OTP 23+): process groups that span nodes,
// Colony and Erlang alike, with pg's own protocol, so a Colony node and an
// Erlang node running pg:start_link() share their groups.
//
//	scope, err := pg.Start(node)                           // the scope "pg", as pg:start_link()
//	err = scope.Join(c, actor.Atom("workers"), c.Self())   // pg:join(workers, self())
//	pids := scope.Members(actor.Atom("workers"))           // pg:get_members(workers), every node's
//	local := scope.LocalMembers(actor.Atom("workers"))     // pg:get_local_members(workers)
//	err = scope.Leave(c, actor.Atom("workers"), c.Self())  // pg:leave(workers, self())
//	ref, pids, err := scope.Monitor(c, actor.Atom("workers")) // pg:monitor(workers): then pg.Change messages
//
// # Scopes and groups
//
// A scope is an actor registered under the scope's name (Name, default
// "pg") on each node that runs it; scopes of one name on different nodes
// form one overlay network, and scopes of different names know nothing of
// each other. A group is any term (etf's Go values): an Erlang
// programmer's group `workers` is actor.Atom("workers"); a Go string is a
// binary (<<"workers">>), a different group. Groups equal as terms are one
// group (int and int64 1, string and []byte): they are keyed by their
// encoding, so a map group of more than 32 keys, whose encoding follows Go's
// map order, is not a reliable group.
//
// A process joins a group as many times as it likes and must leave it as
// many times; Members lists it once per join. Only local pids join (pg's
// rule): a pid of another node is ErrNotLocal. A member that dies leaves
// every group it joined (the scope monitors it). A group with no member
// does not exist: WhichGroups lists only groups with members.
//
// # Consistency
//
// As in OTP, membership is eventually consistent: Join returns once the
// local scope has the member (so this node's Members shows it at once) and
// has sent the join to the peers it knows; another node shows it when the
// message arrives. Views are not transitive: a node sees the groups of the
// nodes it is connected to.
//
// Joins, leaves and every change of the table go through the scope actor,
// one at a time; reads (Members, LocalMembers, WhichGroups) read a table
// the actor publishes under a read lock, as OTP's readers read its ETS table.
//
// # The protocol
//
// See scope.go for the messages, which are OTP's exactly: a scope that
// starts, and every scope when a node comes up, sends {discover, Self} to
// {Scope, Node}; a scope answers a discover with a sync of its local
// members (the cast {'$gen_cast', {sync, Self, [{Group, Pids}]}}) and, if
// it did not know the peer, a discover of its own; joins and leaves go to
// every peer as {join, Self, Group, Pids} and {leave, Self, Pids, Groups}.
// A peer's members are dropped when the peer scope's monitor fires: the
// scope died, or its node went down (noconnection).
package pg
