//go:build windows

package erltest

import (
	"os/exec"
	"syscall"
	"time"
)

// groupKill: Windows has no process groups to kill; the context's end
// kills the node's process (exec.Cmd's default Cancel).
func groupKill(cmd *exec.Cmd) { cmd.WaitDelay = 2 * time.Second }

// signalGroup: Windows delivers no signals but a kill.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		return cmd.Process.Kill()
	}
	return syscall.EWINDOWS
}
