package dist

// Supervised children on other nodes.
//
// Design note.
//
// Problem. A supervisor (package supervisor) starts each child with its
// ChildSpec's Start, in the supervisor's handler, and expects the child
// linked to it: the link is how it learns of the child's death, and its
// shutdown protocol (monitor, exit signal, wait, kill, unlink) works on
// any pid its Context can signal. A child on another node is a remote
// spawn with the link option: Node.SpawnLink, whose link exists from the
// child's birth on both nodes (spawn.go, "Order").
//
// Rejected. (1) A ChildSpec field naming a node, in package supervisor:
// supervisor is built on actor's public API only and must not import dist.
// (2) A local proxy actor per remote child, linked to the supervisor and
// to the child: one more process and one more hop for every signal, and a
// proxy that can die on its own makes a third failure to reason about.
// OTP supervises a remote child directly, by its pid; so does this.
//
// Protocol. RemoteChild returns a start function (the shape of
// supervisor.StartFunc, with no import of supervisor) that spawn-links the
// registered behaviour on the node. Everything else is the supervisor's
// own, over the remote pid: the child's death is an Exit through the link,
// noconnection when the connection goes (an abnormal exit: the strategy
// restarts it); its stop is EXIT2 shutdown with a monitor, the wait, then
// EXIT2 kill. A restart while the node is unreachable fails with a
// *NodeDownError (a start error): the supervisor retries it, each try
// counted against its intensity, as OTP's try_again_restart is, so a node
// that stays away makes the supervisor give up.

import (
	"slices"

	"github.com/colonyrt/colony/actor"
)

// RemoteChild returns a start function for a supervisor.ChildSpec (its
// Start field) that starts the behaviour registered as name (RegisterSpawn)
// on node, spawn-linked to the supervisor (Node.SpawnLink), with args. For
// a SimpleOneForOne template, StartChildArgs's arguments follow args, as
// OTP appends them to the child spec's. A node that is this node's name
// spawns locally, linked.
//
// The child is a plain actor on node. To run cleanup when its supervisor
// stops it (a Server's Terminate), it traps exits and stops on the
// supervisor's Exit (reason actor.Shutdown); otherwise the exit signal ends
// it at once, as an OTP worker that does not trap exits. The start fails
// with a *SpawnError (its SpawnFunc refused args) or a *NodeDownError
// (node unreachable, or gone before it answered); the supervisor counts
// each failed restart against its intensity and retries it. A name
// nothing is registered under on node starts a child that dies of undef
// at once, as spawn_link of a missing function on an Erlang node does: the
// supervisor restarts it until its intensity is spent. See docs/distribution.md, "Supervising a
// child on another node", for what holds across a partition.
func (n *Node) RemoteChild(node actor.Atom, name string, args ...any) func(c *actor.Context, extra ...any) (actor.Pid, error) {
	base := slices.Clone(args)
	return func(c *actor.Context, extra ...any) (actor.Pid, error) {
		all := base
		if len(extra) > 0 {
			all = append(slices.Clone(base), extra...)
		}
		return n.SpawnLink(c, node, name, all...)
	}
}
