//go:build !unix

package erldiff

import "os/exec"

// setProcessGroup: without process groups the context kills only the
// escript process itself.
func setProcessGroup(cmd *exec.Cmd) {}
