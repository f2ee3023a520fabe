#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Idle wake-ups of parked threads under Wine, backend off and on.
#
#   wine/parked.sh [--lib FILE] [--seconds N] [--limit R] [--out DIR] PARKED_EXE
#     PARKED_EXE   wine/tests/parked.c built with mingw (20 parked threads)
#     --lib FILE   libwinsync.so.0 for the backend (see wine/run.sh)
#     --seconds N  the measured window (default 20)
#     --limit R    the most extra context switches per parked thread per
#                  second allowed with the backend on (default 0.05)
#     --out DIR    where the programs' output goes (default: a temporary dir)
#
# Runs the program with wine/run.sh --off, then --on.  Once it prints that
# its threads are parked, the context switches of its Linux process (the
# sum of voluntary_ctxt_switches and nonvoluntary_ctxt_switches over
# /proc/PID/task/*/status) are read, and again N seconds later; the tasks
# must be the same at both reads.  Prints both figures and fails when
# (on - off) / (threads * N) exceeds the limit.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib_args=()
seconds=20
limit=0.05
out=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--lib) lib_args=(--lib "$2"); shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "parked.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $# -eq 1 && -f $1 ]] || { echo "usage: parked.sh [options] PARKED_EXE" >&2; exit 2; }
exe=$1
[[ -n $out ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/wine-parked.XXXXXX")
mkdir -p "$out"

# "<tasks> <switches>" of a process, tasks as a sorted comma list
sample() {
	local pid=$1 f tasks="" total=0 v
	for f in /proc/"$pid"/task/*/status; do
		v=$(awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }' "$f" 2>/dev/null) || return 1
		tasks+="${f#/proc/"$pid"/task/}"
		tasks="${tasks%/status},"
		total=$((total + v))
	done
	echo "$tasks $total"
}

declare -A rate switches
threads=0
for mode in off on; do
	log=$out/parked-$mode.log
	# the program holds its threads for the window plus the time to start and read
	"$here/run.sh" --"$mode" "${lib_args[@]}" -- "$exe" $((seconds + 5)) >"$log" 2>&1 &
	runner=$!
	pid=""
	for _ in $(seq 1 1200); do # up to 120 s: the prefix may be created first
		line=$(grep -a '^parked: pid' "$log" 2>/dev/null | tr -d '\r' || true)
		[[ -n $line ]] && break
		kill -0 "$runner" 2>/dev/null || break
		sleep 0.1
	done
	read -r _ _ pid _ threads <<<"${line:-x x x x 0}"
	if [[ -z $pid || ! -d /proc/$pid ]]; then
		wait "$runner" || true
		echo "FAILED ($mode): the program did not report its parked threads"
		sed 's/^/    /' "$log" | head -20
		exit 1
	fi
	read -r tasks0 count0 < <(sample "$pid")
	sleep "$seconds"
	read -r tasks1 count1 < <(sample "$pid")
	status=0
	wait "$runner" || status=$?
	if [[ $status -ne 0 ]]; then
		echo "FAILED ($mode): the program exited with $status"
		sed 's/^/    /' "$log" | head -20
		exit 1
	fi
	if [[ $tasks0 != "$tasks1" ]]; then
		echo "FAILED ($mode): the process's tasks changed during the window ($tasks0 -> $tasks1)"
		exit 1
	fi
	switches[$mode]=$((count1 - count0))
	rate[$mode]=$(awk -v s="${switches[$mode]}" -v t="$threads" -v n="$seconds" 'BEGIN { printf "%.3f", s / (t * n) }')
	ntasks=$(tr -cd , <<<"$tasks0" | wc -c)
	echo "backend $mode: ${switches[$mode]} context switches in $seconds s over $ntasks tasks" \
		"($threads parked threads): ${rate[$mode]} per parked thread per second"
done

extra=$(awk -v on="${switches[on]}" -v off="${switches[off]}" -v t="$threads" -v n="$seconds" \
	'BEGIN { printf "%.3f", (on - off) / (t * n) }')
echo "extra with the backend on: $extra per parked thread per second (limit $limit)"
if awk -v e="$extra" -v l="$limit" 'BEGIN { exit !(e > l) }'; then
	echo "FAILED: parked threads wake up with the backend on"
	exit 1
fi
echo "passed"
