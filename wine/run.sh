#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs a Windows program on the hybrid Wine of wine/build.sh: its ntdll,
# wineserver and loader, every other DLL from the installed Wine.
#
#   wine/run.sh [--on | --off] [options] -- PROGRAM [ARG...]
#     --on           the winsync backend (WINEWINSYNC=1); the default
#     --off          stock behaviour: the same binaries without the backend
#     --prefix DIR   the Wine prefix (default: <cache>/wine/prefix-on or
#                    prefix-off; created when missing, about 10 s)
#     --lib FILE     libwinsync.so.0 to load (default: $WINEWINSYNC_LIBRARY,
#                    else build/default/winsync/libwinsync.so.0)
#     --lib32 FILE   the 32-bit libwinsync.so.0 that 32-bit processes load
#                    (default: $WINEWINSYNC_LIBRARY32, else the i386 build
#                    beside --lib: <build>/tests/peer32/winsync/libwinsync.so.0)
#     --tree DIR     the hybrid tree (default: wine/build.sh --print-dir)
#     --stats        print the backend's counters of every process at its end
#                    (WINEWINSYNC_STATS=1) on stderr
#     --prefix-only  only create the prefix
#     --persist      leave the wineserver running (started with -p60 if none
#                    runs) instead of waiting for it to exit: for many short
#                    runs in one mode; --kill stops it
#     --kill         only stop the prefix's wineserver
#
# PROGRAM is a Windows program (path on the host) or a Wine program name,
# 64-bit or 32-bit: the tree's loader/wine64 runs 64-bit programs and starts
# the 32-bit tree's loader (wow32/, Wine 8's classic WoW64) for 32-bit ones,
# both on the same wineserver and arena.
# The output goes where run.sh's goes; the exit status is the program's.
# The backend's mode belongs to the wineserver, which the first process of
# a prefix starts: on and off use different prefixes, and run.sh waits for
# the server to exit before it returns, so the next run starts its own.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=../scripts/lib.sh
source "$repo/scripts/lib.sh"

mode=on
prefix=""
lib="${WINEWINSYNC_LIBRARY:-}"
lib32="${WINEWINSYNC_LIBRARY32:-}"
tree=""
stats=0
prefix_only=0
persist=0
kill=0
while [[ $# -gt 0 ]]; do
	case "$1" in
	--on) mode=on; shift ;;
	--off) mode=off; shift ;;
	--prefix) prefix=$2; shift 2 ;;
	--lib) lib=$2; shift 2 ;;
	--lib32) lib32=$2; shift 2 ;;
	--tree) tree=$2; shift 2 ;;
	--stats) stats=1; shift ;;
	--prefix-only) prefix_only=1; shift ;;
	--persist) persist=1; shift ;;
	--kill) kill=1; shift ;;
	--) shift; break ;;
	-h | --help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "wine/run.sh: unknown argument '$1' (the program goes after --)" >&2; exit 2 ;;
	esac
done
[[ $# -gt 0 || $prefix_only == 1 || $kill == 1 ]] || { echo "wine/run.sh: no program given" >&2; exit 2; }

cache=$(ws_cache_dir)/wine
tree=${tree:-$("$here/build.sh" --print-dir)}
[[ -x $tree/loader/wine64 && -f $tree/build.key ]] || {
	echo "wine/run.sh: no hybrid Wine in $tree: run wine/build.sh first" >&2
	exit 2
}
prefix=${prefix:-$cache/prefix-$mode}

export WINEPREFIX=$prefix
# each ntdll looks for <dir>/<arch>-windows/NAME.dll: the 64-bit and the 32-bit DLLs
export WINEDLLPATH=/usr/lib/x86_64-linux-gnu/wine:/usr/lib/i386-linux-gnu/wine
export WINEDEBUG=${WINEDEBUG:--all}
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}
# CI runs without HOME; Wine wants one.
[[ -n ${HOME:-} && $HOME != / ]] || export HOME=${TMPDIR:-/tmp}
unset DISPLAY WAYLAND_DISPLAY
if [[ $mode == on ]]; then
	lib=${lib:-$repo/build/default/winsync/libwinsync.so.0}
	[[ -f $lib ]] || { echo "wine/run.sh: no $lib (build the library, or --lib FILE)" >&2; exit 2; }
	# The wineserver and ntdll dlopen() it from other directories: a relative
	# name would not load there, and the backend would quietly stay off.
	lib=$(realpath "$lib")
	export WINEWINSYNC=1 WINEWINSYNC_LIBRARY=$lib
	# 32-bit processes load their own; without it they run as in stock Wine
	lib32=${lib32:-$(dirname "$(dirname "$lib")")/tests/peer32/winsync/libwinsync.so.0}
	if [[ -f $lib32 ]]; then
		export WINEWINSYNC_LIBRARY32=$(realpath "$lib32")
	else
		unset WINEWINSYNC_LIBRARY32
	fi
else
	unset WINEWINSYNC WINEWINSYNC_LIBRARY WINEWINSYNC_LIBRARY32
fi
if [[ $stats == 1 ]]; then export WINEWINSYNC_STATS=1; else unset WINEWINSYNC_STATS; fi
wine=$tree/loader/wine64
server=$tree/server/wineserver
if [[ $kill == 1 ]]; then
	WINEPREFIX=$(ws_wineprefix_where "$prefix") "$server" -k 2>/dev/null || true
	exit 0
fi

# Made on first use (scripts/lib.sh ws_wineprefix: also where it lives in the guest).
prefix=$(ws_wineprefix "$prefix" "$wine" "$server") || exit 1
export WINEPREFIX=$prefix
[[ $prefix_only == 0 ]] || exit 0

# With --persist the first run starts a server that outlives it (an error
# when one runs already: that one is used).
[[ $persist == 0 ]] || "$server" -p60 2>/dev/null || true
status=0
"$wine" "$@" || status=$?
[[ $persist == 1 ]] || "$server" -w || true
exit "$status"
