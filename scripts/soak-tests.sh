#!/usr/bin/env bash
# soak-tests.sh runs the test suite N times in a row while a CPU hog keeps
# every core busy, and reports each failing run with the output of its
# failing tests. A test that waits on a fixed sleep, or bounds an event too
# tightly, fails here long before it fails a contributor.
#
#   scripts/soak-tests.sh [-n N] [-k] [-j HOGS] [-- COMMAND ...]
#
#   -n N      runs (default 10)
#   -k        keep going after a failing run (default: stop at the first)
#   -j HOGS   busy loops to run beside the suite (default: one per core,
#             nproc); 0 runs without a hog
#   COMMAND   what to run each time (default: go test -race -count=1
#             ./..., the README's command with the test cache off, so
#             every run runs every test), from the repository root
#
# Each run's whole output is kept in a temporary directory (printed at the
# start and the end); the hogs are killed on exit, however the script ends.
# Exit status: 0 if every run passed, 1 otherwise.
set -uo pipefail

runs=10
keep=0
hogs=$(nproc)
while [ $# -gt 0 ]; do
	case "$1" in
	-n) runs=$2; shift 2 ;;
	-k) keep=1; shift ;;
	-j) hogs=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "soak-tests.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
if [ $# -eq 0 ]; then
	set -- go test -race -count=1 ./...
fi
case "$runs$hogs" in
*[!0-9]*) echo "soak-tests.sh: -n and -j take a number" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.." || exit 2
logs=$(mktemp -d "${TMPDIR:-/tmp}/colony-soak.XXXXXX")

hog_pids=()
stop_hogs() {
	for p in "${hog_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${hog_pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	hog_pids=()
}
trap 'stop_hogs' EXIT
trap 'echo "soak-tests.sh: interrupted; logs in $logs" >&2; exit 130' INT TERM

for _ in $(seq 1 "$hogs"); do
	sh -c 'while :; do :; done' &
	hog_pids+=($!)
done

echo "soak-tests.sh: $runs run(s) of: $*"
echo "soak-tests.sh: $hogs CPU hog(s) on $(nproc) core(s); logs in $logs"

# failing_output prints, from a go test output file, each failing test's
# own lines (its --- FAIL block and what it logged) and each failing
# package's summary; for anything else (a build failure, a panic) the tail.
failing_output() {
	local log=$1
	if grep -qE '^(--- FAIL|FAIL)' "$log"; then
		awk '
			/^=== (RUN|PAUSE|CONT|NAME)/ { next }
			/^--- FAIL/ { show = 1; print; next }
			/^(--- PASS|--- SKIP|ok |PASS$)/ { show = 0; next }
			/^FAIL/ { print; show = 0; next }
			/^panic: |^fatal error: |^WARNING: DATA RACE/ { show = 1 }
			show { print }
		' "$log" | head -n 400
	else
		tail -n 60 "$log"
	fi
}

failed=0
total_start=$(date +%s)
for i in $(seq 1 "$runs"); do
	log="$logs/run-$i.log"
	start=$(date +%s.%N)
	# Opened for appending, so that a line a test writes to the go
	# command's own stderr (tests/main_test.go) lands after, not under,
	# what the go command writes.
	: >"$log"
	"$@" >>"$log" 2>&1
	rc=$?
	wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	if [ "$rc" -eq 0 ]; then
		echo "run $i/$runs: ok in ${wall}s"
		continue
	fi
	failed=$((failed + 1))
	pkgs=$(awk '$1 == "FAIL" && NF >= 2 { printf "%s ", $2 }' "$log")
	echo "run $i/$runs: FAILED (exit $rc) in ${wall}s: ${pkgs:-see the output}; full output: $log"
	echo "----- failing tests of run $i -----"
	failing_output "$log"
	echo "----- end of run $i -----"
	if [ "$keep" -eq 0 ]; then
		break
	fi
done
total=$(($(date +%s) - total_start))
stop_hogs

if [ "$failed" -eq 0 ]; then
	echo "soak-tests.sh: all $runs run(s) passed in ${total}s; logs in $logs"
	exit 0
fi
echo "soak-tests.sh: $failed failing run(s) in ${total}s; logs in $logs"
exit 1
