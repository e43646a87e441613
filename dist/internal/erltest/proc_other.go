//go:build unix && !linux

package erltest

import (
	"os/exec"
	"syscall"
	"time"
)

// groupKill runs cmd in a process group of its own, killed as a whole when
// the test's context ends.
func groupKill(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
}

// signalGroup sends sig to cmd's process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error { return syscall.Kill(-cmd.Process.Pid, sig) }
