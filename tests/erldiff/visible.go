package erldiff

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Visible prints line where a plain `go test ./...` shows it. In package
// list mode the go command prints a passing package's output only with
// -v, so a line printed here to stdout or stderr would be seen only on a
// failure; when this binary's parent is the go command, the line goes to
// the go command's own stderr (the terminal, pipe or file the user reads)
// instead. Run any other way, or with -v, to this binary's stderr. For a
// test binary's TestMain, after m.Run (it reads testing.Verbose).
//
// The go command's stderr is reached two ways. First its very file
// description, duplicated with pidfd_getfd (parentFd): a write through it
// moves the offset the go command writes at, so a plain file (go test ...
// > log 2>&1) gets the line, and the go command's next line comes after
// it. The kernel allows that only to whom may ptrace the go command (the
// same user, unless a ptrace restriction such as Yama's ptrace_scope
// forbids it; Linux only). Else /proc/PPID/fd/2 opened anew, which has an
// offset of its own: right for a terminal, a pipe or a file opened for
// appending, and not tried for a plain file, where the go command's next
// write would overwrite the line (appendable). Where neither works, the
// line is this binary's output, shown with -v or on a failure.
func Visible(line string) {
	if !testing.Verbose() {
		ppid := os.Getppid()
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ppid)); err == nil && strings.TrimSuffix(filepath.Base(exe), ".exe") == "go" {
			if f, err := parentFd(ppid, 2); err == nil {
				_, err = fmt.Fprintln(f, line)
				f.Close()
				if err == nil {
					return
				}
			}
			if appendable(ppid) {
				if f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", ppid), os.O_WRONLY|os.O_APPEND, 0); err == nil {
					_, err = fmt.Fprintln(f, line)
					f.Close()
					if err == nil {
						return
					}
				}
			}
		}
	}
	fmt.Fprintln(os.Stderr, line)
}

// appendable reports whether a write of ours to the go command's stderr
// (process ppid, fd 2) lands after what it has written and stays there: a
// terminal, a pipe or a file it opened for appending. A plain file (go test
// ... > log 2>&1) is written at the go command's own offset, which our
// write does not move, so its next write would overwrite our line.
func appendable(ppid int) bool {
	fi, err := os.Stat(fmt.Sprintf("/proc/%d/fd/2", ppid))
	if err != nil {
		return false
	}
	if !fi.Mode().IsRegular() {
		return true
	}
	info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/2", ppid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&syscall.O_APPEND != 0
		}
	}
	return false
}
