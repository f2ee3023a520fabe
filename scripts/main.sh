#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The main job: builds everything (winsync, its tests and benchmark, the
# Win32 layer, winsync.dll and the demos with mingw-w64, the patched kernel),
# runs the core benchmark on the host, then boots the QEMU guest and prints
# the demo comparison: kernel32 (Wine's objects) against winsync.dll and
# native winsync, with the benchmark table.
#   scripts/main.sh [winsync-bench arguments]
set -euo pipefail
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
# shellcheck source=lib.sh
source scripts/lib.sh

ws_step "packages (scripts/deps.sh)"
scripts/deps.sh core wine kernel wine-build i386
ws_step "default build"
cmake --preset default
cmake --build --preset default -j "$(nproc)"
ws_step "benchmark (winsync-bench)"
build/default/tests/bench/winsync-bench "$@"

ws_step "patched kernel (kernel/build.sh, cached)"
kernel/build.sh
# Wine's ntdll and wineserver with the winsync backend: the (d) column.
ws_step "Wine with the winsync backend (wine/build.sh, cached)"
wine/build.sh
# The Wine prefixes are made on the host and the guest uses them through
# its overlay.
ws_step "Wine prefixes"
demo/run-demos.sh --build build/default --hybrid --prefix-only
ws_step "demos in the QEMU guest"
image/run-guest.sh -- demo/run-demos.sh --build build/default --hybrid
# The figures of docs/figures.md come from this table.
ws_steps_table build/timings-main.md
