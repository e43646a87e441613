//go:build !unix

package main

import "os/exec"

// groupKill: no process groups here; the context's end kills cmd alone
// (exec.Cmd's default Cancel).
func groupKill(*exec.Cmd) {}
