#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-man.sh HEADER PAGE...
# Fails when groff warns about a page (groff -man -ww -z), or when a function
# the header exports (WS_API) is named in no page's NAME section.
set -euo pipefail
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
header=$1
shift
failed=0
names=""
for page in "$@"; do
  warnings=$(groff -man -ww -z "$page" 2>&1) || { echo "$page: groff failed"; failed=1; }
  if [[ -n $warnings ]]; then
    echo "$page: groff warns:"
    echo "$warnings" | sed 's/^/  /'
    failed=1
  fi
  names="$names $(sed -n '/^\.SH NAME$/,/\\-/p' "$page" | { grep -o 'ws_[a-z0-9_]*' || true; } | tr '\n' ' ')"
done
functions=$(grep -E '^WS_API' "$header" | grep -oE 'ws_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u)
[[ -n $functions ]] || { echo "no WS_API functions found in $header"; exit 1; }
for f in $functions; do
  if ! grep -qw -- "$f" <<<"$names"; then
    echo "$f: in $header but in no man page's NAME section"
    failed=1
  fi
done
[[ $failed -eq 0 ]] || exit 1
echo "$# pages without a groff warning; the $(wc -w <<<"$functions") functions of $(basename "$header") named"
