#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Tells a unit's timing noise from a difference the backend makes, from the
# failing lines of many runs (the outputs of wine/compare-tests.sh).
#
#   wine/line-noise.sh [--runs R] [--draws N] DIR...
#     DIR        a compare-tests.sh --out directory (DIR/run*/off.lines and
#                on.lines); several are pooled
#     --runs R   the runs per mode of the comparison to judge (default 3)
#     --draws N  random draws (default 5000)
#
# Draws R off runs and R on runs from the pool, without replacement, and
# applies compare-tests.sh's rule (a line is worse when the on runs in which
# it failed outnumber the off runs by more than R/2); then the same with
# both sets of R drawn from the off runs alone (stock against stock: its
# two sides come from one pool, which raises that rate by about n/(n-1)
# for n off runs).
# Prints both rates of a WORSE verdict: when the first is no higher than
# the second, the unit's "worse" lines are the machine's noise, which a
# comparison of R runs reports that often with the backend in no part.
set -euo pipefail

runs=3
draws=5000
while [[ $# -gt 0 ]]; do
	case "$1" in
	--runs) runs=$2; shift 2 ;;
	--draws) draws=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "line-noise.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $# -ge 1 ]] || { echo "usage: line-noise.sh [--runs R] [--draws N] DIR..." >&2; exit 2; }

# one record per run: "mode<TAB>line line ..." (an empty run has no lines)
for dir in "$@"; do
	for f in "$dir"/run*/off.lines "$dir"/run*/on.lines; do
		[[ -f $f ]] || continue
		printf '%s\t%s\n' "$(basename "$f" .lines)" "$(tr '\n' ' ' <"$f")"
	done
done | awk -F'\t' -v R="$runs" -v N="$draws" '
	{ n[$1]++; run[$1, n[$1]] = $2 }
	# draws k distinct runs of mode m into pick[1..k] (partial shuffle)
	function draw(m, k,   i, j, t) {
		for (i = 1; i <= n[m]; i++) idx[i] = i
		for (i = 1; i <= k; i++) {
			j = i + int(rand() * (n[m] - i + 1))
			t = idx[i]; idx[i] = idx[j]; idx[j] = t
			pick[i] = idx[i]
		}
	}
	# 1 when the runs in b are worse than those in a by compare-tests.sh rule
	function worse(ma, a, mb, b,   i, k, c, cnt, l) {
		delete cnt
		for (i = 1; i <= R; i++) {
			c = split(run[mb, b[i]], l, " ")
			for (k = 1; k <= c; k++) cnt[l[k]]++
			c = split(run[ma, a[i]], l, " ")
			for (k = 1; k <= c; k++) cnt[l[k]]--
		}
		for (k in cnt) if (cnt[k] > R / 2) return 1
		return 0
	}
	END {
		if (n["off"] < 2 * R || n["on"] < R) {
			printf "line-noise.sh: %d off and %d on runs; need %d off and %d on\n", n["off"], n["on"], 2 * R, R > "/dev/stderr"
			exit 2
		}
		srand(1)
		for (d = 0; d < N; d++) {
			draw("off", R); for (i = 1; i <= R; i++) a[i] = pick[i]
			draw("on", R);  for (i = 1; i <= R; i++) b[i] = pick[i]
			w_on += worse("off", a, "on", b)
			draw("off", 2 * R)
			for (i = 1; i <= R; i++) { a[i] = pick[i]; b[i] = pick[R + i] }
			w_off += worse("off", a, "off", b)
		}
		printf "%d off and %d on runs; comparisons of %d runs each way: WORSE in %.1f%% of draws on against off, %.1f%% off against off\n",
			n["off"], n["on"], R, 100 * w_on / N, 100 * w_off / N
	}'
