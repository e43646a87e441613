package registry

import "errors"

// Operational errors. Each may be returned wrapped with the offending name;
// test with errors.Is.
var (
	// ErrEmptyName: Register or Unregister was given "".
	ErrEmptyName = errors.New("registry: empty name")
	// ErrNameTaken: Register of a name another (or the same) pid holds.
	ErrNameTaken = errors.New("registry: name already registered")
	// ErrAlreadyNamed: Register of a pid that already holds a name; a process
	// has at most one registered name, as in Erlang.
	ErrAlreadyNamed = errors.New("registry: process already has a registered name")
	// ErrNotRegistered: Unregister of a name no pid holds.
	ErrNotRegistered = errors.New("registry: name not registered")
	// ErrNotJoined: Leave of a group the pid has no join left in (pg's not_joined).
	ErrNotJoined = errors.New("registry: process has not joined the group")
)
