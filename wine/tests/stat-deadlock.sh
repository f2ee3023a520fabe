#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# winsync-stat on Wine: deadlock.exe deadlocks two threads on two mutexes
# under Wine with the winsync backend, and winsync-stat --wine-prefix must
# print that cycle, naming both threads by their Windows thread ids.
#   wine/tests/stat-deadlock.sh --lib LIBWINSYNC --stat WINSYNC_STAT --exe DEADLOCK_EXE
# Needs wine/build.sh's tree (the wine-prefix fixture).
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
lib="" stat="" exe=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--lib) lib=$2; shift 2 ;;
	--stat) stat=$2; shift 2 ;;
	--exe) exe=$2; shift 2 ;;
	*) echo "stat-deadlock.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[[ -f $lib && -x $stat && -f $exe ]] || { echo "stat-deadlock.sh: --lib, --stat and --exe are needed" >&2; exit 2; }
# shellcheck source=../../scripts/lib.sh
source "$here/../../scripts/lib.sh"
prefix=$(ws_cache_dir)/wine/prefix-on
[[ -n ${HOME:-} && $HOME != / ]] || export HOME=${TMPDIR:-/tmp}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$here/../run.sh" --on --lib "$lib" --prefix "$prefix" -- "$exe" 60 >"$out" 2>&1 &
run=$!
for _ in $(seq 600); do
	grep -q '^deadlocked' "$out" && break
	kill -0 "$run" 2>/dev/null || break
	sleep 0.1
done
grep '^deadlocked' "$out" || { cat "$out"; echo "stat-deadlock.sh: deadlock.exe never deadlocked" >&2; exit 1; }
ids=$(sed -n 's/^deadlocked: thread \(0x[0-9a-f]*\) holds mutex 1, thread \(0x[0-9a-f]*\) holds.*/\1 \2/p' "$out")
status=0
chains=$("$stat" --chains --wine-prefix "$prefix" 2>&1) || status=$?
echo "$chains"
"$here/../run.sh" --on --lib "$lib" --prefix "$prefix" --kill
wait "$run" || true
[[ $status -eq 0 ]] || { echo "stat-deadlock.sh: winsync-stat failed ($status)" >&2; exit 1; }
read -r a b <<<"$ids"
grep -q "thread $a (tid [0-9]*) waits on mutex 0x[0-9a-f]* owned by thread $b (tid [0-9]*), which waits on mutex 0x[0-9a-f]* owned by thread $a (tid [0-9]*): cycle (deadlock)" <<<"$chains" ||
	{ echo "stat-deadlock.sh: no cycle $a -> $b -> $a" >&2; exit 1; }
grep -q "^  1 cycle$" <<<"$chains" || { echo "stat-deadlock.sh: not exactly one cycle" >&2; exit 1; }
echo "stat-deadlock.sh: the cycle of threads $a and $b found"
