// Package registry holds the two name spaces of a Colony system: the name
// registry (erlang:register/2, whereis/1, unregister/1) and OTP pg-style
// process groups (pg:join/2, pg:leave/2, pg:get_members/1).
//
// The package is a floor-1 mechanism: it knows nothing of actors. Both tables
// are generic over the pid type P, which only has to be comparable; the actor
// package instantiates them with its Pid and calls Remove / RemoveAll when a
// process dies, so that names and group memberships vanish at death as they do
// in Erlang.
//
// Errors are sentinel values prefixed "registry: ", usable with errors.Is; they
// may be wrapped with the offending name.
//
// # Registry
//
// One name names one pid and one pid holds at most one name. Register of a
// held name fails with ErrNameTaken, Register of a pid that already has a name
// fails with ErrAlreadyNamed, and of concurrent Registers of one name exactly
// one wins. Whereis, the lookup behind every send by name, is lock-free.
//
// # Groups
//
// A group is a list of pids, one entry per Join: a process that joins a group
// twice is listed twice and must Leave twice, as in pg. Members returns the
// entries in join order; Which lists the groups that have members, sorted.
//
// A monitor of a group (pg:monitor/1) gets the members at the moment it
// starts and then one Change per join and per leave, through the Notify hook,
// called under the Groups lock so that one group's changes are told in the
// order they were made; a member's death (RemoveAll) is one leave per entry
// it had. A monitor ends with Demonitor or with its watcher's RemoveAll.
//
// # Caller's contract at death
//
// The tables cannot see liveness. The runtime keeps them honest by making
// every change for a process atomic with that process's death: it holds the
// process's own lock (actor's cold state) across a Register, a Join and an
// Unregister for it, and its death takes that lock to mark it dead and
// collect its name, groups and group monitors (Remove, RemoveAll). A
// Register, Join or Monitor for a dead process is refused under the lock, so
// no name, membership or monitor outlives its process. A Leave needs no lock: it only removes. Lock order
// (docs/locking.md): the actor's lock, then the registry's.
package registry
