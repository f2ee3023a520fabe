#!/usr/bin/env bash
# The main job: builds everything (winsync, its tests and benchmark, the
# Win32 layer, winsync.dll and the demos with mingw-w64, the patched kernel),
# runs the core benchmark on the host, then boots the QEMU guest and prints
# the demo comparison: kernel32 (Wine's objects) against winsync.dll and
# native winsync, with the benchmark table.
#   scripts/main.sh [winsync-bench arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh core wine kernel
cmake --preset default
cmake --build --preset default -j "$(nproc)"
build/default/tests/bench/winsync-bench "$@"

kernel/build.sh
# The Wine prefix is made on the host (about 10 s; a minute under TCG) and
# the guest uses it through its overlay.
demo/run-demos.sh --build build/default --prefix-only
image/run-guest.sh -- demo/run-demos.sh --build build/default
