//go:build unix

package etf_test

import (
	"os/exec"
	"syscall"
)

// groupKill runs cmd in a process group of its own, killed as a whole
// when its context ends.
func groupKill(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
