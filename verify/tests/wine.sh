#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs a Windows program on the installed (stock) Wine for winsync-verify's
# Wine backends (`winsync-verify --wine verify/tests/wine.sh`), in a prefix
# of its own, <cache>/verify-wineprefix (scripts/lib.sh ws_cache_dir; or
# $WINSYNC_VERIFY_WINEPREFIX), set explicitly: CI runs without HOME.  The
# prefix is made on first use (about 10 s; scripts/lib.sh ws_wineprefix).
#   verify/tests/wine.sh PROGRAM [ARG...]
#   verify/tests/wine.sh --prefix-only
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/lib.sh
source "$here/../../scripts/lib.sh"
prefix=${WINSYNC_VERIFY_WINEPREFIX:-$(ws_cache_dir)/verify-wineprefix}
export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
[[ -n ${HOME:-} && $HOME != / ]] || export HOME=${TMPDIR:-/tmp}
unset DISPLAY WAYLAND_DISPLAY WINEDLLPATH WINESERVER WINELOADER
ws_wine64_only "${TMPDIR:-/tmp}/winsync-wine64-bin"
prefix=$(ws_wineprefix "$prefix" wine wineserver) || exit 1
[[ ${1:-} != --prefix-only ]] || exit 0
export WINEPREFIX=$prefix
exec wine "$@" </dev/null
