//go:build unix

package erldiff

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs the escript in its own process group and makes the
// context's cancellation kill the whole group: escript execs erl, which
// execs beam.smp, which forks erl_child_setup.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
