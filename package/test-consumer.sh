#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds and runs package/consumer against an installed winsync.
#   test-consumer.sh --via cmake|pkgconfig --prefix DIR --source DIR --work DIR
#     cmake      find_package(winsync) with CMAKE_PREFIX_PATH=DIR
#     pkgconfig  pkg-config winsync / winsync-win32 from DIR's pkgconfig directory
# Fails unless both programs print package/consumer/expected.txt and load
# the libraries from DIR (not from the build tree or the system).
# Environment: CC (default cc), WINSYNC_VERSION (checked against the package).
set -euo pipefail
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac

via="" prefix="" source="" work=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --via) via=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --source) source=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "test-consumer.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n $via && -d $prefix && -d $source && -n $work ]] ||
  { echo "usage: test-consumer.sh --via cmake|pkgconfig --prefix DIR --source DIR --work DIR" >&2; exit 2; }
prefix=$(cd "$prefix" && pwd)
cc=${CC:-cc}
fail() { echo "test-consumer.sh ($via): $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
case "$via" in
  cmake)
    cmake -S "$source" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/configure.log" 2>&1 ||
      { cat "$work/configure.log" >&2; fail "configure failed"; }
    found=$(sed -n 's/^winsync_DIR:PATH=//p' "$work/CMakeCache.txt")
    [[ $found == "$prefix"/* ]] || fail "find_package found winsync in '$found', not under $prefix"
    echo "find_package(winsync): $found"
    cmake --build "$work" >"$work/build.log" 2>&1 ||
      { cat "$work/build.log" >&2; fail "build failed"; }
    libpath=""  # CMake's build RPATH points at the imported libraries
    ;;
  pkgconfig)
    pc=$(find "$prefix" -name winsync.pc -path '*/pkgconfig/*' | head -1)
    [[ -n $pc ]] || fail "no winsync.pc under $prefix"
    # Only this prefix's .pc files: a system winsync.pc must not answer.
    export PKG_CONFIG_LIBDIR=${pc%/*}
    unset PKG_CONFIG_PATH
    version=$(pkg-config --modversion winsync)
    echo "pkg-config: $pc, version $version"
    [[ -z ${WINSYNC_VERSION:-} || $version == "$WINSYNC_VERSION" ]] ||
      fail "winsync.pc says version $version, the build is $WINSYNC_VERSION"
    pkg-config --exists 'winsync-win32 = '"$version" || fail "winsync-win32.pc missing or of another version"
    # shellcheck disable=SC2046  # pkg-config's output is a list of words
    "$cc" -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags winsync) "$source/consumer.c" \
      $(pkg-config --libs winsync) -o "$work/consumer"
    # shellcheck disable=SC2046
    "$cc" -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags winsync-win32) "$source/consumer-win32.c" \
      $(pkg-config --libs winsync-win32) -o "$work/consumer-win32"
    libpath=$(pkg-config --variable=libdir winsync)
    ;;
  *) fail "--via takes cmake or pkgconfig" ;;
esac

for program in consumer consumer-win32; do
  deps=$(LD_LIBRARY_PATH=$libpath ldd "$work/$program")
  for lib in $([[ $program == consumer ]] && echo libwinsync.so.0 || echo libwinsync.so.0 libwinsync-win32.so.0); do
    where=$(awk -v lib="$lib" '$1 == lib { print $3 }' <<<"$deps")
    [[ $where == "$prefix"/* ]] || fail "$program loads $lib from '${where:-nowhere}', not from $prefix"
  done
  status=0
  LD_LIBRARY_PATH=$libpath "$work/$program" >"$work/$program.out" || status=$?
  if [[ $status -ne 0 ]]; then
    cat "$work/$program.out"
    fail "$program exited with status $status"
  fi
done
cat "$work/consumer.out" "$work/consumer-win32.out" >"$work/all.out"
if ! diff -u "$source/expected.txt" "$work/all.out"; then
  fail "output differs from $source/expected.txt"
fi
echo "test-consumer.sh ($via): both programs built against $prefix and ran as expected"
