#!/usr/bin/env bash
# Every test: the native suite and the QEMU guest tests (CTest labels
# `native` and `guest`), then the native suite again under
# AddressSanitizer+UBSan and under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh core wine kernel docs package
jobs=$(nproc)

step() { printf '\n== %s (%s)\n' "$*" "$(date +%T)"; }

step "default build: native and guest tests"
cmake --preset default
cmake --build --preset default -j "$jobs"
ctest --preset default

for preset in asan tsan; do
  step "$preset build: native tests"
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset"
done
step "all tests passed"
