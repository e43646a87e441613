//go:build nocolony

package main

import (
	"fmt"
	"os"
)

func distMain([]string) int {
	fmt.Fprintln(os.Stderr, "bench dist: NOT MEASURED (built with -tags nocolony)")
	return 1
}
