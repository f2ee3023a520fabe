#!/usr/bin/env bash
# Runs a Windows program on the installed (stock) Wine, in the Wine prefix
# of the cache that the demos use (demo/run-demos.sh: <cache>/wineprefix,
# made by CTest's demo-wineprefix), with WINEPREFIX set explicitly: CI runs
# without HOME.  For `winsync-verify --wine`.
#   verify/tests/wine.sh PROGRAM [ARG...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/lib.sh
source "$here/../../scripts/lib.sh"
prefix=${WINSYNC_WINEPREFIX:-$(ws_cache_dir)/wineprefix}
[[ -f $prefix/system.reg ]] || { echo "verify/tests/wine.sh: no Wine prefix $prefix (demo/run-demos.sh --prefix-only)" >&2; exit 2; }
export WINEPREFIX=$prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
[[ -n ${HOME:-} && $HOME != / ]] || export HOME=${TMPDIR:-/tmp}
unset DISPLAY WAYLAND_DISPLAY
exec wine "$@" </dev/null
