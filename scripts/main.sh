#!/usr/bin/env bash
# The main job: builds winsync and runs its benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh core
cmake --preset native
cmake --build --preset native -j "$(nproc)"
build/native/tests/bench/winsync-bench "$@"
