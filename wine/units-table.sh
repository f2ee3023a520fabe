#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the units of wine/units.txt with the winsync backend off and on
# (wine/compare-tests.sh each) and prints the off/on table of wine/README.md.
#
#   wine/units-table.sh [--lib FILE] [--arch i386 [--lib32 FILE]] [--out DIR] [--sets LIST]
#                       [--runs N] [--timeout S] [MODULE...]
#     --arch i386   the units' 32-bit programs (the tree's wow32/tests: kernel32
#                   and ntdll, the default MODULEs then), as 32-bit processes
#     --sets LIST   comma-separated sets of units.txt (default exact,ci,long,full)
#     --timeout S   per run of a unit (default: wine/compare-tests.sh's)
#     --runs N      runs per mode for every unit (default: units.txt's column)
#     --out DIR     where the outputs go (default: a temporary directory)
#     MODULE...     only these modules
#
# Prints each unit's comparison as it ends, then a Markdown table (unit,
# failures off, failures on, verdict, seconds); exits with 1 when a unit is
# worse with the backend on.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pass=()
out=""
sets=exact,ci,long,full
runs=""
arch=x86_64
while [[ $# -gt 0 ]]; do
	case "$1" in
	--lib | --lib32) pass+=("$1" "$2"); shift 2 ;;
	--arch) pass+=("$1" "$2"); arch=$2; shift 2 ;;
	--timeout) pass+=(--timeout "$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	--sets) sets=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "units-table.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
modules=" $* "
# wine/build.sh builds the 32-bit programs of these modules only
[[ $arch == x86_64 || $modules != "  " ]] || modules=" kernel32 ntdll "
[[ -n $out ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/wine-units.XXXXXX")
mkdir -p "$out"

rows=()
worse=0
while read -r module unit set unit_runs; do
	[[ -n $module && $module != \#* ]] || continue
	[[ ,$sets, == *,$set,* ]] || continue
	[[ $modules == "  " || $modules == *" $module "* ]] || continue
	start=$(date +%s)
	status=0
	result=$("$here/compare-tests.sh" "${pass[@]}" --runs "${runs:-$unit_runs}" \
		--out "$out/$module-$unit" "$module" "$unit" 2>&1) || status=$?
	secs=$(($(date +%s) - start))
	echo "$result"
	# "kernel32 sync: failures off 0, on 0 (1 runs each): same"
	verdict=$(grep -E "^$module $unit: failures off" <<<"$result" | tail -1 || true)
	if [[ -z $verdict ]]; then
		rows+=("| $module $unit | - | - | error (see $out/$module-$unit) | $secs |")
		worse=1
		continue
	fi
	off=$(sed -E 's/.*failures off ([^ ]*), on.*/\1/' <<<"$verdict")
	on=$(sed -E 's/.*, on ([^ ]*) \(.*/\1/' <<<"$verdict")
	word=${verdict##*: }
	flaky=$(grep -c '^    flaky:' <<<"$result" || true)
	[[ $flaky -eq 0 ]] || word="$word ($flaky lines flaky on)"
	[[ $status -eq 0 ]] || worse=1
	rows+=("| $module $unit | $off | $on | $word | $secs |")
done <"$here/units.txt"

echo
echo "| unit | failures off | failures on | verdict | seconds (off+on) |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
exit "$worse"
