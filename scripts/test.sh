#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every test: the native suite, Wine's own tests on Wine with the winsync
# backend off and on, and the QEMU guest tests (CTest labels `native`,
# `wine` and `guest`), then the native suite again under
# AddressSanitizer+UBSan and under ThreadSanitizer, and as 32-bit programs
# (the native32 preset, CTest label i386).
#
#   scripts/test.sh [--long] [--debug-kernel]
#
# --long adds the long run of the random tester (tests/random/long-run.sh)
# on the default build and on the ASan+UBSan build, WINSYNC_RANDOM_MINUTES
# (default 15) each, the native suite in the QEMU guest on both futex
# backends (without it: op 31 only, and futex_waitv only where the host
# lacks it), the 32-bit suite there on both (without it: futex_waitv
# only; about 6 minutes a backend under TCG), the robustness suites under
# TSan at 25% of the host's work (10% without), Wine's units of the set
# long (wine/units.txt: ws2_32 sock, 10 minutes), and where the host's kernel
# runs no i386 program, Wine's 32-bit tests in the guest (guest-wine32);
# CI does not pass it.
# --debug-kernel adds the bounded run on the debug kernel (CTest label
# guest-debug, kernel/run-debug.sh: it builds the debug kernel); CI does not
# pass it either (kernel/README.md has its times).
set -euo pipefail
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
# shellcheck source=lib.sh
source scripts/lib.sh

long=false
debug_kernel=false
for arg in "$@"; do
  case "$arg" in
  --long) long=true ;;
  --debug-kernel) debug_kernel=true ;;
  *) echo "usage: scripts/test.sh [--long] [--debug-kernel]" >&2; exit 2 ;;
  esac
done
random_minutes=${WINSYNC_RANDOM_MINUTES:-15}

scripts/deps.sh core wine kernel docs package wine-build i386
jobs=$(nproc)

# The patched kernel (about 10 minutes of both CPUs from nothing) builds in
# the background at the idle scheduling policy: it gets only the CPU time
# the rest leaves, and the builds and tests below leave much of it (Wine's
# tests wait on their timeouts).  CTest runs the guest's tests last; their
# fixture guest-kernel-build waits on kernel/build.sh's lock, and builds
# the kernel itself should this build have failed.  Nothing to do once it
# is cached.
kernel_log=build/kernel-background.log
mkdir -p build
setsid chrt --idle 0 kernel/build.sh >"$kernel_log" 2>&1 &
kernel_pid=$!
trap 'kill -- -$kernel_pid 2>/dev/null || :' EXIT
echo "winsync: the patched kernel builds in the background (idle policy; $kernel_log)"

step() { ws_step "$@"; }

# Every mode in turn, 30 s per seed; seeds from the clock, so that each long
# run tries new ones (a failure prints the command line that repeats it).
long_random() {
  $long || return 0
  step "$1 build: random tester, $random_minutes min"
  tests/random/long-run.sh "build/$1/tests/random/winsync-random" "$random_minutes" 30
}

step "default build"
# OFF said explicitly: a --debug-kernel run leaves ON in the CMake cache.
# With --long on a host whose kernel runs no i386 program, Wine's 32-bit
# tests run in the QEMU guest (guest-wine32; the host skips them).
if $long && ! ws_kernel_runs_i386; then guest_wine32=ON; else guest_wine32=OFF; fi
# The native suite in the guest (6 minutes a backend): on op 31, which only
# the patched kernel has; on futex_waitv too where the host has none, or
# with --long (the host's own run covers it otherwise).
if $long || ! ws_kernel_has_futex_waitv; then guest_backends="waitv;multiple"; else guest_backends=multiple; fi
# Wine's units of the set long (wine/units.txt): with --long only.
if $long; then wine_long=ON; else wine_long=OFF; fi
cmake --preset default -DWINSYNC_GUEST_DEBUG_TESTS=OFF -DWINSYNC_GUEST_WINE32=$guest_wine32 \
  "-DWINSYNC_GUEST_BACKENDS=$guest_backends" -DWINSYNC_WINE_LONG=$wine_long
cmake --build --preset default -j "$jobs"
# Built here, not only in CTest's wine-build, so that its progress shows.
step "Wine with the winsync backend (wine/build.sh, cached)"
wine/build.sh
step "default tests: native, wine, guest (with the kernel build), package, docs"
# A job per CPU: the tests that time something, Wine's and the guest's run
# alone (RUN_SERIAL; tests/CMakeLists.txt says which and why).
ctest --preset default -j "$jobs"
long_random default

if $debug_kernel; then
  step "debug kernel: bounded checks in the guest (label guest-debug)"
  cmake --preset default -DWINSYNC_GUEST_DEBUG_TESTS=ON
  ctest --preset default -L guest-debug --output-on-failure
  cmake --preset default -DWINSYNC_GUEST_DEBUG_TESTS=OFF >/dev/null
fi

for preset in asan tsan; do
  step "$preset build"
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j "$jobs"
  step "$preset tests"
  # --long: TSan's robustness suites at 25% of the host's work, not 10%.
  if $long && [ "$preset" = tsan ]; then
    WINSYNC_ROBUST_SCALE=25 ctest --preset "$preset" -j "$jobs"
  else
    ctest --preset "$preset" -j "$jobs"
  fi
  [ "$preset" != asan ] || long_random asan
done
step "native32 build: the native suite as 32-bit programs"
# With --long, also in the guest (label guest too; image/CMakeLists.txt);
# only there where this kernel cannot execute i386 programs (the host's
# runs are skips then: cmake/i386-run.sh).
# There, on futex_waitv only without --long: op 31's 32-bit entry is the
# 32-bit futex selftests' (guest-selftests-32, default build).
if $long || ! ws_kernel_runs_i386; then guest32=ON; else guest32=OFF; fi
if $long; then guest_backends="waitv;multiple"; else guest_backends=waitv; fi
cmake --preset native32 -DWINSYNC_GUEST_TESTS=$guest32 "-DWINSYNC_GUEST_BACKENDS=$guest_backends"
cmake --build --preset native32 -j "$jobs"
ctest --preset native32 -j "$jobs"
# The figures of docs/figures.md come from this table.
ws_steps_table build/timings-test.md
echo "all tests passed"
