#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-histories.sh TOOL DIR: every DIR/*.history and *.counterexample is a
# history whose first line says what the checker must answer ("# A real
# failure" or "# Its counterexample": not linearizable; "# Linearizable":
# linearizable), and the checker must answer it.
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
tool=$1
dir=$2
failed=0
count=0
for h in "$dir"/*.history "$dir"/*.counterexample; do
  [[ -f $h ]] || continue
  count=$((count + 1))
  case $(head -1 "$h") in
    "# Linearizable"*) want=0 ;;
    *) want=1 ;;
  esac
  status=0
  "$tool" check "$h" --quiet --no-shrink --time-limit 120 >/dev/null 2>&1 || status=$?
  if [[ $status -ne $want ]]; then
    echo "FAIL  $(basename "$h"): exit status $status, expected $want"
    failed=1
  else
    echo "ok    $(basename "$h"): exit status $status"
  fi
done
[[ $count -gt 0 ]] || { echo "no histories in $dir"; exit 1; }
exit $failed
