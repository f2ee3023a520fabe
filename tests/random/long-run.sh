#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A long run of winsync-random: every mode in turn, a new seed each run,
# until MINUTES have passed; then the totals (calls per mode, the histogram of
# results per call, every kind of violation with the first seed that showed
# it and its command line).  Exit status 1 if any run failed (a violation, a
# sanitizer report, a crash or a run that did not end).  Not part of CTest,
# which runs each mode briefly; scripts/test.sh --long runs it.
#
#   tests/random/long-run.sh BINARY MINUTES [SECONDS_PER_RUN [FIRST_SEED [MODE...]]]
#
# Each run's output is kept in $OUT (default: a new directory in /tmp).
set -eu
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac

bin=${1:?usage: long-run.sh BINARY MINUTES [SECONDS_PER_RUN [FIRST_SEED [MODE...]]]}
minutes=${2:?minutes}
per_run=${3:-30}
seed=${4:-$(date +%s)}
shift $(( $# < 4 ? $# : 4 ))
modes=${*:-exact shared waitall close deaths nonblock badinput many}
out=${OUT:-$(mktemp -d /tmp/winsync-random.XXXXXX)}
mkdir -p "$out"

start=$(date +%s)
end=$(( start + minutes * 60 ))
runs=0
failed=0
while [ "$(date +%s)" -lt "$end" ]; do
	for mode in $modes; do
		[ "$(date +%s)" -lt "$end" ] || break
		log="$out/$mode-$seed"
		status=0
		"$bin" --mode "$mode" --seed "$seed" --seconds "$per_run" --keep-going \
			>"$log.out" 2>"$log.err" || status=$?
		echo "$mode seed $seed: exit $status, $(grep -m1 '^RESULT' "$log.out" || echo 'no result')"
		if grep -q 'ERROR: AddressSanitizer\|runtime error:\|WARNING: ThreadSanitizer' "$log.err"; then
			echo "SANITIZER $mode $seed" >>"$out/sanitizer"
		fi
		if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
			echo "CRASH $mode $seed exit $status" >>"$out/sanitizer"
		fi
		[ "$status" -eq 0 ] || failed=$((failed + 1))
		runs=$((runs + 1))
		seed=$((seed + 1))
	done
done

echo
echo "== $runs runs of $per_run s in $(( ($(date +%s) - start + 30) / 60 )) min, $failed failed, output in $out"
cat "$out"/*.out | awk -v dir="$out" '
/^mode / { split($0, a, " "); }
/^CALLS / { calls[$2] += $3; runs[$2]++ }
/^HIST / {
	# HIST mode call rc count
	hist[$3 " " $4] += $5; total[$3] += $5
}
/^KIND / {
	# KIND mode count first at T s (actor A): text
	text = $0; sub(/^KIND [^ ]+ [0-9]+ first at [^:]*: /, "", text)
	key = $2 ": " text
	kcount[key] += $3; if (!(key in kruns)) order[n++] = key; kruns[key]++
}
/^RESULT / { seed[$2 " " $4]++; res[$2] = res[$2] " " $4 ($5 == "FAIL" ? "F" : "") }
END {
	printf "\n| mode | runs | calls |\n|---|---|---|\n"
	for (m in calls) { printf "| %s | %d | %d |\n", m, runs[m], calls[m]; all += calls[m] }
	printf "| all | | %d |\n", all
	printf "\n| call | calls | results |\n|---|---|---|\n"
	for (k in hist) { split(k, p, " "); line[p[1]] = line[p[1]] " " p[2] "=" hist[k] }
	for (c in total) printf "| %s | %d |%s |\n", c, total[c], line[c]
	printf "\nviolation kinds (mode: kind; violations; runs that showed it):\n"
	for (i = 0; i < n; i++) printf "  %s; %d; %d\n", order[i], kcount[order[i]], kruns[order[i]]
}'
echo
echo "first seed of each kind:"
for f in "$out"/*.out; do
	grep '^KIND' "$f" | sed "s|^KIND \([^ ]*\) [0-9]* first at [^:]*: |\1 $(basename "$f" .out | sed 's/.*-//'): |"
done | sort -t: -k2 -u | sort
[ -f "$out/sanitizer" ] && { echo; echo "sanitizer reports or crashes:"; cat "$out/sanitizer"; }
[ "$failed" -eq 0 ]
