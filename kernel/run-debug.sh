#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The series on the debug kernel (kernel/build.sh --debug: KASAN, lockdep,
# UBSAN, DEBUG_LIST, DEBUG_OBJECTS, fail_futex; SMAP on) in the QEMU guest.
#
#   kernel/run-debug.sh            the bounded run of CTest (label guest-debug):
#                                  selftests 64-bit, 60 s of futex_fuzz,
#                                  60 s of fail_futex per setting
#   kernel/run-debug.sh --long     the long run: selftests 64 and 32-bit,
#                                  futex_fuzz and trinity side by side for
#                                  600 s, fail_futex 180 s per setting
#   kernel/run-debug.sh -- ARGS    kernel/debug-run.sh with these ARGS
#
# Builds (or reuses) the debug kernel and builds futex_fuzz
# (kernel/fuzz/build.sh) into <cache>/kernel/fuzz first. The guest run fails on any
# kernel report (image/run-guest.sh); a copy of its console is kept in
# <cache>/kernel/debug-console.log. Needs `scripts/deps.sh kernel`, and
# `scripts/deps.sh fuzz` for trinity.
set -euo pipefail
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
args=(--selftests 64 --fuzz 60 --fault 60)
timeout_s=3600
case "${1:-}" in
--long)
	args=(--selftests both --fuzz 600 --trinity 600 --fault 180)
	timeout_s=10800
	shift
	;;
--)
	shift
	args=("$@")
	timeout_s=10800
	;;
"") ;;
*)
	sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0" >&2
	exit 2
	;;
esac
"$here/build.sh" --debug
cache=$(dirname "$(dirname "$("$here/build.sh" --print-dir --debug)")")
"$here/fuzz/build.sh" "$cache/kernel/fuzz"
t0=$(date +%s)
rc=0
WINSYNC_GUEST_CONSOLE=$cache/kernel/debug-console.log \
	"$here/../image/run-guest.sh" --debug --timeout "$timeout_s" -- \
	"$here/debug-run.sh" "${args[@]}" || rc=$?
echo "run-debug.sh: guest run of ${args[*]}: $(($(date +%s) - t0)) s, exit $rc (console: $cache/kernel/debug-console.log)"
exit "$rc"
