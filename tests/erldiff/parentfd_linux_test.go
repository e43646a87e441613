package erldiff

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// A line written through parentFd lands where the parent's own descriptor
// points and moves it on: in a plain file (not opened for appending, as
// go test ... > log leaves it) the parent's next write comes after the
// line instead of overwriting it, as a write through a descriptor of the
// child's own (/proc/PPID/fd/N opened anew) would.
func TestParentFdSharesTheParentsOffset(t *testing.T) {
	if fd := os.Getenv("ERLDIFF_PARENTFD"); fd != "" {
		n, _ := strconv.Atoi(fd)
		f, err := parentFd(os.Getppid(), n)
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			fmt.Fprintln(os.Stderr, "parentFd:", err)
			os.Exit(3) // refused here: Visible falls back
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "parentFd:", err)
			os.Exit(2)
		}
		if _, err := f.WriteString("the child's line\n"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("before\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestParentFdSharesTheParentsOffset$")
	cmd.Env = append(os.Environ(), "ERLDIFF_HELPER=1", fmt.Sprint("ERLDIFF_PARENTFD=", f.Fd()))
	out, err := cmd.CombinedOutput()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("this kernel refuses pidfd_getfd on the parent (no pidfd, or a ptrace restriction): Visible falls back to /proc and stderr\n%s", out)
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	f.WriteString("after\n")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "before\nthe child's line\nafter\n"; string(got) != want {
		t.Fatalf("the file reads %q, want %q", got, want)
	}
}
