#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs the Debian packages a part of winsync needs, only those missing.
#   scripts/deps.sh [GROUP...]   groups of scripts/lib.sh (default: core)
#     core        compiler, CMake, Check: the library, its tests, the benchmark
#     wine        Wine and mingw-w64: winsync.dll and the Windows demos
#     kernel      the patched kernel and the QEMU guest
#     wine-build  Wine's ntdll and server from Debian's source
#     docs        groff: the man page check
#     package     dpkg-dev, debhelper, lintian: the Debian packages (debian/) and their test
#     i386        32-bit programs: gcc-multilib, Check for i386, mingw-w64 for i686
#                 and wine32 (adds dpkg's i386 architecture)
set -euo pipefail
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
ws_install "${@:-core}"
