#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Checks wine/line-noise.sh on made-up runs (no Wine needed):
#   - a line that fails in every on run and no off run: WORSE in 100% of
#     the draws on against off, 0% off against off;
#   - on runs that are copies of the off runs (a line failing in 15 of 40):
#     both rates about 23% (15/40 x 25/40; off against off draws its two
#     sides from one pool, 15/40 x 25/39), within 3 points of each other;
#   - fewer runs than a draw needs: exit status 2.
#   wine/tests/line-noise-test.sh
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
expect() { # WHAT EXPECTED-REGEX OUTPUT
	if [[ $3 =~ $2 ]]; then echo "ok: $1: $3"; else echo "FAILED: $1: $3"; failed=1; fi
}

for r in $(seq 1 40); do
	mkdir -p "$tmp/b/run$r"
	if ((r <= 8)); then
		mkdir -p "$tmp/a/run$r"
		: >"$tmp/a/run$r/off.lines"
		echo "x.c:1" >"$tmp/a/run$r/on.lines"
	fi
	if ((r <= 15)); then echo "y.c:2" >"$tmp/b/run$r/off.lines"; else : >"$tmp/b/run$r/off.lines"; fi
	cp "$tmp/b/run$r/off.lines" "$tmp/b/run$r/on.lines"
done
expect "worse in every on run" "WORSE in 100\.0% of draws on against off, 0\.0% off against off" \
	"$("$here/line-noise.sh" --runs 2 "$tmp/a")"
out=$("$here/line-noise.sh" --runs 1 --draws 20000 "$tmp/b")
expect "the same runs both ways" "WORSE in 2[0-7]\\.[0-9]% of draws on against off, 2[0-7]\\.[0-9]% off against off" "$out"
on=$(sed -E 's/.*WORSE in ([0-9.]+)%.*/\1/' <<<"$out")
off=$(sed -E 's/.*, ([0-9.]+)% off against off.*/\1/' <<<"$out")
expect "the same runs both ways: rates within 3 points" "^yes$" \
	"$(awk -v a="$on" -v b="$off" 'BEGIN { d = a - b; print (d < 3 && d > -3) ? "yes" : "no: " a " and " b }')"
status=0
"$here/line-noise.sh" --runs 5 "$tmp/a" >/dev/null 2>&1 || status=$?
expect "too few runs" "^2$" "$status"
exit $failed
