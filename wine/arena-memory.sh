#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The memory of a fresh Wine prefix, backend off and on: the prefix's arena
# has the core's maximum capacity (WS_MAX_CAPACITY objects), and must cost
# no more than the objects the prefix really has.
#
#   wine/arena-memory.sh [--lib FILE] [--tree DIR] [--limit MIB] [--out DIR] PARKED_EXE
#     PARKED_EXE   wine/tests/parked.c built with mingw (a process that
#                  creates a few objects and parks 20 threads)
#     --lib FILE   libwinsync.so.0 for the backend (see wine/run.sh)
#     --tree DIR   the hybrid tree (default: wine/build.sh --print-dir)
#     --limit MIB  the most the backend may add, in MiB, to the PSS of the
#                  wineserver and the program together, and to the arena's
#                  and watch file's allocated blocks (default 16)
#     --out DIR    where the prefixes and logs go (default: a temporary dir)
#
# For each mode a new prefix is created (wine/run.sh --prefix-only), then
# the program runs in it; once its threads are parked, the wineserver's and
# the program's RSS and PSS (/proc/PID/smaps_rollup) are read, and with the
# backend on the size and allocated blocks of the arena (/dev/shm/winsync-
# wine-*) and of the watch file the server maps.  Fails when the arena's
# size is not that of WS_MAX_CAPACITY objects, or when the backend adds more
# than the limit (a dense arena of that capacity would add 256 MiB).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
run_args=()
limit=16
out=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--lib | --tree) run_args+=("$1" "$2"); shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "arena-memory.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $# -eq 1 && -f $1 ]] || { echo "usage: arena-memory.sh [options] PARKED_EXE" >&2; exit 2; }
exe=$1
[[ -n $out ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/wine-arena-memory.XXXXXX")
mkdir -p "$out"
max_capacity=$(awk '/#define WS_MAX_CAPACITY/ { sub(/u$/, "", $3); print $3 }' "$repo/include/winsync.h")
object_size=64  # bytes per object slot (winsync/layout.h)

kib() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/smaps_rollup"; }
mib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }

# The wineserver whose environment names this prefix.
server_of() {
	local p
	for p in $(pgrep -x wineserver); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "WINEPREFIX=$1" && { echo "$p"; return 0; }
	done
	return 1
}

# "<size> <allocated>" in bytes of a file, or "0 0".
file_bytes() {
	[[ -f $1 ]] || { echo "0 0"; return; }
	stat -c '%s %b %B' "$1" | awk '{ print $1, $2 * $3 }'
}

declare -A pss
for mode in off on; do
	prefix=$out/prefix-$mode
	log=$out/arena-memory-$mode.log
	rm -rf "$prefix"
	"$here/run.sh" --"$mode" "${run_args[@]}" --prefix "$prefix" --prefix-only
	"$here/run.sh" --"$mode" "${run_args[@]}" --prefix "$prefix" -- "$exe" 30 >"$log" 2>&1 &
	runner=$!
	line=""
	for _ in $(seq 1 600); do
		line=$(grep -a '^parked: pid' "$log" 2>/dev/null | tr -d '\r' || true)
		[[ -n $line ]] && break
		kill -0 "$runner" 2>/dev/null || break
		sleep 0.1
	done
	read -r _ _ pid _ <<<"${line:-x x x x}"
	server=$(server_of "$prefix" || true)
	if [[ -z $pid || ! -d /proc/$pid || -z $server ]]; then
		wait "$runner" || true
		echo "FAILED ($mode): the program did not report its parked threads, or no wineserver"
		sed 's/^/    /' "$log" | head -20
		exit 1
	fi
	sleep 2 # the prefix's services settle
	# The server names the arena after its directory, its working directory.
	dir=$(readlink "/proc/$server/cwd")
	name=$(stat -c '%D %i' "$dir" | awk '{ printf "wine-%s-%x", $1, $2 }')
	read -r arena_size arena_alloc < <(file_bytes "/dev/shm/winsync-$name")
	read -r watch_size watch_alloc < <(file_bytes "$dir/winsync-watch")
	s_rss=$(kib "$server" Rss) s_pss=$(kib "$server" Pss) p_rss=$(kib "$pid" Rss) p_pss=$(kib "$pid" Pss)
	pss[$mode]=$((s_pss + p_pss))
	wait "$runner" || { echo "FAILED ($mode): the program failed"; sed 's/^/    /' "$log" | head -20; exit 1; }
	printf 'backend %-3s  wineserver RSS %6d KiB PSS %6d KiB   program RSS %6d KiB PSS %6d KiB\n' \
		"$mode" "$s_rss" "$s_pss" "$p_rss" "$p_pss"
	if [[ $mode == on ]]; then
		echo "            arena: $(mib "$arena_size") MiB in size, $(mib "$arena_alloc") MiB allocated;" \
			"watch file: $(mib "$watch_size") MiB in size, $(mib "$watch_alloc") MiB allocated"
	fi
done

status=0
want=$((max_capacity * object_size))
if [[ $arena_size -lt $want ]]; then
	echo "FAILED: the arena is $arena_size bytes, less than $max_capacity objects of $object_size bytes"
	status=1
fi
extra=$((pss[on] - pss[off]))
echo "the backend adds $(mib $((extra * 1024))) MiB of PSS (wineserver + program) and" \
	"$(mib $((arena_alloc + watch_alloc))) MiB of files (limit $limit MiB each)"
if [[ $extra -gt $((limit * 1024)) || $((arena_alloc + watch_alloc)) -gt $((limit * 1048576)) ]]; then
	echo "FAILED: a fresh prefix's arena costs more than the limit"
	status=1
fi
[[ $status -ne 0 ]] || echo "passed"
exit "$status"
