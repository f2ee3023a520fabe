#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs one of Wine's conformance test units on the hybrid Wine of
# wine/build.sh, with the winsync backend on or off, and checks the result.
#
#   wine/run-tests.sh [options] MODULE UNIT
#   wine/run-tests.sh [options] --program EXE [ARG...]
#     MODULE UNIT   kernel32 sync, kernel32 thread, ntdll sync, ntdll om, ...
#                   (the program MODULE_test.exe of the hybrid tree)
#     --arch ARCH   x86_64 (the default) or i386: the 32-bit build of
#                   MODULE_test.exe (the tree's wow32/tests), run as a 32-bit
#                   process; its output and lines files are named *-i386-*
#     --program EXE another test program that ends with "N passed, N failed"
#                   (wine/tests/backend.c)
#     --on          WINEWINSYNC=1 (the default); --off: stock behaviour
#     --lib FILE    libwinsync.so.0 for --on (see wine/run.sh)
#     --lib32 FILE  the 32-bit one (see wine/run.sh)
#     --out DIR     where the output goes (default: a temporary directory)
#     --lines FILE  write the failures' source lines ("sock.c:6667"), one per
#                   line, sorted, plus "<no summary>" or "<status N>" when the
#                   program crashed, hung (timeout) or printed no summary,
#                   and "<wineserver crashed>" when the server went away
#     --timeout S   kill the program after S seconds (default 900)
#     --no-check    only report: do not require 0 failures or the backend's
#                   in-process calls (wine/compare-tests.sh judges instead)
#     --counters N  with --on, exactly N processes must print the backend's
#                   counters at their exit (wine/tests/killed.c)
#     --claims      with --on, each line "mixed: process P: W waits, S signals
#                   on shared objects" of the program's output needs process
#                   P's counters to show at least W waits and S signals served
#                   in process (wine/tests/mixed.c)
#
# Passes when the program exits with 0 and every process of the test
# reports its tests with 0 failures.  The run has WINEWINSYNC_STATS=1:
# with --on every process that used the backend prints its counters, and
# the test must have served calls in process (the backend was in use);
# with --off no process may print them (the backend was off).  A 32-bit
# test (--arch i386, --lib32) exits 77, a CTest skip, where the kernel
# cannot execute i386 programs (no IA32 emulation).
# Prints one summary line: "<module> <unit> (winsync on|off): N tests
# executed, F failures, S skipped, T todo[; in process: ...]".
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../scripts/lib.sh
source "$here/../scripts/lib.sh"
mode=on
lib_args=()
out=""
program=""
lines=""
limit=900
check=1
counters=""
claims=0
arch=x86_64
while [[ $# -gt 0 ]]; do
	case "$1" in
	--on) mode=on; shift ;;
	--off) mode=off; shift ;;
	--lib) lib_args+=(--lib "$2"); shift 2 ;;
	--lib32) lib_args+=(--lib32 "$2"); shift 2 ;;
	--arch) arch=$2; shift 2 ;;
	--claims) claims=1; shift ;;
	--out) out=$2; shift 2 ;;
	--lines) lines=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--no-check) check=0; shift ;;
	--counters) counters=$2; shift 2 ;;
	--program) program=$2; shift 2; break ;;
	-h | --help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run-tests.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
# A 32-bit test where the kernel cannot execute i386 programs: a CTest skip.
if [[ $arch == i386 || " ${lib_args[*]} " == *" --lib32 "* ]] && ! ws_kernel_runs_i386; then
	echo "run-tests.sh: skipped: this kernel cannot execute i386 programs (no IA32 emulation)"
	exit 77
fi
if [[ -n $program ]]; then
	exe=$program module=$(basename "$program" .exe) unit=""
	args=("$@")
else
	[[ $# -eq 2 ]] || { echo "usage: run-tests.sh [--on|--off] [--lib FILE] MODULE UNIT" >&2; exit 2; }
	module=$1 unit=$2
	case $arch in
	x86_64) exe=$("$here/build.sh" --print-dir)/tests/${module}_test.exe ;;
	i386) exe=$("$here/build.sh" --print-dir)/wow32/tests/${module}_test.exe ;;
	*) echo "run-tests.sh: unknown --arch $arch (x86_64 or i386)" >&2; exit 2 ;;
	esac
	args=("$unit")
fi
[[ -f $exe ]] || { echo "run-tests.sh: no $exe: run wine/build.sh first" >&2; exit 2; }
[[ -n $out ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/wine-tests.XXXXXX")
mkdir -p "$out"
suffix=""
[[ $arch == x86_64 ]] || suffix=-$arch
log=$out/$module${unit:+-$unit}$suffix-$mode.log

status=0
timeout "$limit" "$here/run.sh" --"$mode" "${lib_args[@]}" --stats -- "$exe" "${args[@]}" >"$log" 2>&1 || status=$?

# "0020:sync: 345553 tests executed (10 marked as todo, 0 as flaky, 0 failures), 0 skipped."
summary=$(awk -v unit="$unit" '
	$0 ~ ":" unit ": [0-9]+ tests executed" {
		sub(/^.*: /, "", $0)   # drop "pid:unit: "
		gsub(/[(),.]/, " ")
		n = split($0, f, " ")
		for (i = 1; i <= n; i++) {
			if (f[i] == "tests" && f[i + 1] == "executed") executed += f[i - 1]
			if (f[i] == "marked") todo += f[i - 1]
			if (f[i] == "failures" || f[i] == "failure") failures += f[i - 1]
			if (f[i] == "skipped") skipped += f[i - 1]
		}
		processes++
	}
	END { printf "%d %d %d %d %d\n", processes, executed, failures, skipped, todo }' "$log")
read -r processes executed failures skipped todo <<<"$summary"
if [[ -n $program ]]; then
	# "22 passed, 0 failed"
	summary=$(awk '{ sub(/\r$/, "") } /^[0-9]+ passed, [0-9]+ failed$/ { p = $1; f = $3; n++ }
		END { printf "%d %d %d\n", n, p + f, f }' "$log")
	read -r processes executed failures <<<"$summary"
fi
stats=$(awk '/^winsync: process [0-9a-f]+: [0-9]+ calls in process/ {
		calls += $4; lines++
		for (i = 1; i <= NF; i++) if ($i == "fallbacks") fb += $(i - 1)
	}
	END { printf "%d %d %d\n", lines, calls, fb }' "$log")
read -r stat_lines calls fallbacks <<<"$stats"

line="$module${unit:+ $unit}${suffix:+ (32-bit)} (winsync $mode): $executed tests executed, $failures failures, $skipped skipped, $todo todo"
[[ $mode == on ]] && line="$line; in process: $calls calls in $stat_lines processes, $fallbacks fallbacks to the server"
echo "$line"

if [[ -n $lines ]]; then
	# "0020:sock.c:6667: Test failed: ..." and todo_wine successes, which Wine counts as failures
	{
		sed -n -E 's/^([0-9a-f]+:)?([A-Za-z0-9_.]+\.c:[0-9]+): Test (failed|succeeded inside todo block).*/\2/p' "$log"
		[[ -z $program ]] || awk '{ sub(/\r$/, "") } /^FAILED: / { print "<" $0 ">" }' "$log"
		grep -q 'unhandled exception' "$log" && echo "<unhandled exception>"
		# the client's word for a server that went away (crash or kill) under it
		grep -q 'wineserver crashed' "$log" && echo "<wineserver crashed>"
		[[ $status -ne 124 ]] || echo "<timeout after $limit s>"
		[[ $processes -gt 0 ]] || echo "<no summary>"
		[[ $status -eq 0 || $status -eq 124 || $failures -gt 0 ]] || echo "<status $status>"
	} | sort >"$lines"
fi

fail() {
	echo "FAILED: $*"
	grep -E 'Test failed|Test succeeded inside todo|unhandled exception|^FAILED|^winsync|err:' "$log" | head -40 | sed 's/^/    /'
	echo "    (full output: $log)"
	exit 1
}
# whether the backend was in use is checked in every mode (with --no-check
# not for a program that crashed before its counters: its lines say so)
if [[ $mode == on ]]; then
	[[ $stat_lines -gt 0 || ($check == 0 && $processes -eq 0) ]] ||
		fail "no process reported winsync counters: the backend was not in use"
else
	[[ $stat_lines -eq 0 ]] || fail "a process used winsync although the backend was off"
fi
[[ $check == 1 ]] || exit 0
[[ $status -eq 0 ]] || fail "the test program exited with status $status"
[[ $processes -gt 0 && $executed -gt 0 ]] || fail "no test summary in the output"
[[ $failures -eq 0 ]] || fail "$failures failures"
[[ $mode == off || $calls -gt 0 ]] || fail "no call was served in process: the backend was not in use"
[[ $mode == off || -z $counters || $stat_lines -eq $counters ]] ||
	fail "$stat_lines processes printed the backend's counters at exit, not $counters"
if [[ $mode == on && $claims == 1 ]]; then
	# "mixed: process 00f4: 4 waits, 1 signals on shared objects" against
	# "winsync: process 00f4: 7 calls in process (3 signals, 0 queries, 4 waits), ..."
	short=$(awk '{ sub(/\r$/, "") }
		/^mixed: process [0-9a-f]+: [0-9]+ waits, [0-9]+ signals/ { n++; w[$3] = $4; s[$3] = $6 }
		/^winsync: process [0-9a-f]+: [0-9]+ calls in process/ {
			got_s[$3] = substr($8, 2); got_w[$3] = $12 }
		END {
			if (!n) print "no claims in the output"
			for (p in w) {
				if (!(p in got_w)) printf "process %s printed no counters\n", p
				else if (got_w[p] < w[p] || got_s[p] < s[p])
					printf "process %s: %d waits, %d signals in process, fewer than its %d, %d\n",
					       p, got_w[p], got_s[p], w[p], s[p]
			}
		}' "$log")
	[[ -z $short ]] || fail "not served in process: $short"
	echo "claims: $(grep -c '^mixed: process' "$log") processes served their shared-object calls in process"
fi
