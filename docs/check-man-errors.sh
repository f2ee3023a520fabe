#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every error that tests/man_errors.c makes a function return is listed by
# the function's man page (its ERRORS or RETURN VALUE section).
#   docs/check-man-errors.sh PROGRAM MAN3_DIR
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
program=${1:?usage: check-man-errors.sh PROGRAM MAN3_DIR}
man3=${2:?usage: check-man-errors.sh PROGRAM MAN3_DIR}
seen=$("$program")
[[ -n $seen ]] || { echo "check-man-errors.sh: $program printed nothing"; exit 1; }
failed=0 checked=0
while read -r function error; do
	page=""
	for p in "$man3"/*.3; do
		if sed -n '/^\.SH NAME$/,/\\-/p' "$p" | grep -qw -- "$function"; then
			page=$p
			break
		fi
	done
	if [[ -z $page ]]; then
		echo "$function: no page names it"
		failed=1
		continue
	fi
	checked=$((checked + 1))
	if ! sed -n '/^\.SH \(ERRORS\|RETURN VALUE\)$/,/^\.SH \(SEE ALSO\|EXAMPLE\|NOTES\|ENVIRONMENT\)/p' "$page" |
		grep -q -- "\\\\${error}\\b"; then
		echo "$function returns $error, which $(basename "$page") does not list"
		failed=1
	fi
done <<<"$seen"
[[ $failed -eq 0 ]] || exit 1
echo "check-man-errors.sh: $checked errors, each listed by its function's page"
