// Erlang/OTP: each sample is one run of erlang/colonybench.escript in a fresh VM.
//
// The script times itself (VM start-up and compilation are not measured) and prints one line,
// "RESULT otp=.. wall_ns=.. check=.. [key=value ...]", which this file parses into a Sample.
// Extra keys ending in _ns are converted to the _ms metrics the report uses.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

const erlangScript = "erlang/colonybench.escript"

func init() {
	runs := map[string]RunFunc{}
	for _, w := range workloads {
		if strings.HasPrefix(w.Name, "tcpecho") || w.Name == "callext" {
			continue // not in the escript: tcpecho.go; an Erlang node has no "outside" caller
		}
		name := w.Name
		if name == "fanout" {
			name = "forkjoin" // the same code at other sizes
		}
		runs[w.Name] = func(p Params) (Sample, error) { return runErlang(name, p) }
	}
	impls["erlang"] = &Impl{Name: "erlang", Runs: runs, Unavailable: func() string {
		if _, err := exec.LookPath("escript"); err != nil {
			return "erlang: not installed, skipped (no escript on PATH; apt-get install erlang-nox)"
		}
		if _, err := erlangScriptPath(); err != nil {
			return "erlang: " + err.Error() + ", skipped"
		}
		return ""
	}}
}

// erlangScriptPath finds the script next to the working directory (go run . in bench/) or next to
// this source file (go test, or go run from elsewhere).
func erlangScriptPath() (string, error) {
	if _, err := os.Stat(erlangScript); err == nil {
		return erlangScript, nil
	}
	if _, src, _, ok := runtime.Caller(0); ok {
		p := filepath.Join(filepath.Dir(src), erlangScript)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found (run from the bench directory)", erlangScript)
}

// erlangTimeout bounds one escript run; the harness applies -timeout around it too, but a VM
// must be killed, not abandoned.
var erlangTimeout = 5 * time.Minute

func runErlang(workload string, p Params) (Sample, error) {
	script, err := erlangScriptPath()
	if err != nil {
		return Sample{}, err
	}
	cmd := exec.Command("escript", script, workload,
		strconv.Itoa(p.N), strconv.Itoa(p.Actors), strconv.Itoa(p.Depth),
		strconv.FormatInt(int64(p.MaxDelay/time.Millisecond), 10), strconv.FormatInt(p.Seed, 10),
		strconv.FormatInt(int64(p.Base/time.Millisecond), 10))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmdOutputTimeout(cmd, erlangTimeout)
	if err != nil {
		return Sample{}, fmt.Errorf("escript %s: %v: %s", workload, err, lastLines(string(out)+stderr.String(), 5))
	}
	for _, line := range strings.Split(string(out), "\n") {
		rest, ok := strings.CutPrefix(line, "RESULT ")
		if !ok {
			continue
		}
		return parseErlangResult(rest)
	}
	return Sample{}, fmt.Errorf("escript %s printed no RESULT line: %s", workload, lastLines(string(out)+stderr.String(), 5))
}

func parseErlangResult(line string) (Sample, error) {
	kv := parseKV(line)
	wall, err := parseInt(kv, "wall_ns")
	if err != nil {
		return Sample{}, fmt.Errorf("erlang result %q: %v", line, err)
	}
	check, err := parseInt(kv, "check")
	if err != nil {
		return Sample{}, fmt.Errorf("erlang result %q: %v", line, err)
	}
	s := Sample{Wall: time.Duration(wall), Check: check}
	for k, v := range kv {
		switch k {
		case "wall_ns", "check", "otp":
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return Sample{}, fmt.Errorf("erlang result %q: %s: %v", line, k, err)
		}
		if base, ok := strings.CutSuffix(k, "_ns"); ok {
			k, f = base+"_ms", f/1e6
		}
		if s.Extra == nil {
			s.Extra = map[string]float64{}
		}
		s.Extra[k] = f
	}
	return s, nil
}

var erlangVersionOnce = sync.OnceValue(func() string {
	if _, err := exec.LookPath("erl"); err != nil {
		return "not installed"
	}
	out, err := exec.Command("erl", "-noshell", "-eval",
		`io:format("~s (erts ~s)", [erlang:system_info(otp_release), erlang:system_info(version)]), halt().`).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
})

func erlangVersion() string { return erlangVersionOnce() }
