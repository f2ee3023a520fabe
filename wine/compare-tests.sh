#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs one of Wine's conformance test units with the winsync backend off
# and on, several times, and fails when it is worse on than off.
#
#   wine/compare-tests.sh [options] MODULE UNIT
#   wine/compare-tests.sh [options] --program EXE [ARG...]
#     --runs N      runs per mode, alternating off and on (default 1)
#     --lib FILE    libwinsync.so.0 for the backend (see wine/run.sh)
#     --lib32 FILE  the 32-bit one (see wine/run.sh)
#     --arch ARCH   x86_64 (the default) or i386: the unit's 32-bit program
#     --out DIR     where the output goes (default: a temporary directory)
#     --timeout S   per run (default 900)
#
# Units that fail on the hybrid Wine with the backend off (no network,
# no display, ...) and units whose failures vary from run to run are
# compared by their failing source lines (wine/run-tests.sh --lines): a
# line is worse on when the number of on runs in which it failed exceeds
# the number of off runs in which it failed by more than half the runs
# (with 1 run: it failed on and not off; with 2: in both on runs and in
# no off run).  A crash, a hang or a missing summary counts as a line.
# Lines that failed on more often than off without reaching that are
# printed as flaky, and do not fail the comparison.
#
# Prints the runs' summaries and one verdict line:
#   "<module> <unit>: failures off 48,47, on 51,48: same|better|WORSE ..."
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=1
pass=()
out=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--runs) runs=$2; shift 2 ;;
	--lib | --lib32 | --arch | --timeout) pass+=("$1" "$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	--program) break ;;
	-h | --help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "compare-tests.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $# -ge 1 && $runs -ge 1 ]] || { echo "usage: compare-tests.sh [options] MODULE UNIT | --program EXE" >&2; exit 2; }
if [[ $1 == --program ]]; then
	name=$(basename "$2" .exe)
else
	[[ $# -eq 2 ]] || { echo "usage: compare-tests.sh [options] MODULE UNIT" >&2; exit 2; }
	name="$1 $2"
fi
[[ -n $out ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/wine-compare.XXXXXX")
mkdir -p "$out"

declare -A counts
for ((r = 1; r <= runs; r++)); do
	for mode in off on; do
		dir=$out/run$r
		mkdir -p "$dir"
		summary=$("$here/run-tests.sh" --"$mode" --no-check --out "$dir" --lines "$dir/$mode.lines" \
			"${pass[@]}" "$@") || { echo "$summary"; echo "FAILED: run $r, backend $mode"; exit 1; }
		echo "run $r: $summary"
		counts[$mode]+="${counts[$mode]:+,}$(wc -l <"$dir/$mode.lines")"
	done
done

# per line: the number of off runs and of on runs in which it failed
table=$(for ((r = 1; r <= runs; r++)); do
	for mode in off on; do sort -u "$out/run$r/$mode.lines" | sed "s/^/$mode /"; done
done | awk -v runs="$runs" '
	{ line = substr($0, length($1) + 2); n[line, $1]++; seen[line] = 1 }
	END {
		for (line in seen) {
			off = n[line, "off"] + 0; on = n[line, "on"] + 0
			if (on - off > runs / 2) kind = "worse"
			else if (on > off) kind = "flaky"
			else if (off - on > runs / 2) kind = "better"
			else continue
			printf "%s\t%d\t%d\t%s\n", kind, off, on, line
		}
	}' | sort)

verdict=same
grep -q '^better' <<<"$table" && verdict=better
grep -q '^worse' <<<"$table" && verdict=WORSE
echo "$name: failures off ${counts[off]}, on ${counts[on]} ($runs runs each): $verdict"
while IFS=$'\t' read -r kind off on line; do
	[[ -n $kind ]] || continue
	echo "    $kind: $line failed in $off of $runs runs off, $on of $runs on"
done <<<"$table"
echo "    (output: $out)"
[[ $verdict != WORSE ]]
