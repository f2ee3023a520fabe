#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run a set of a build's CTest tests; meant for the guest:
#
#   image/run-guest.sh -- image/guest-ctest.sh BUILD_DIR waitv|multiple
#   image/run-guest.sh -- image/guest-ctest.sh BUILD_DIR wine32
#
# waitv|multiple: the native library tests of one futex backend,
# `ctest -L native -R '\.BACKEND$'`.  wine32: Wine's 32-bit tests
# (`wine32-*` and `wine-mixed-*`, with their fixtures wine-build and
# wine-prefix), for a host whose kernel runs no i386 program.  The guest
# kernel has futex_waitv, FUTEX_WAIT_MULTIPLE and IA32 emulation, so a
# skipped test (exit 77) is a failure here, unless WINSYNC_GUEST_ALLOW_SKIP=1.
# The verdict comes from CTest's exit status and its JUnit report
# (--output-junit).  A job per guest CPU: the tests that time something run
# alone, by their RUN_SERIAL in the build's CTest files (tests/CMakeLists.txt).
set -u
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
usage="usage: guest-ctest.sh BUILD_DIR waitv|multiple|wine32"
build=${1:?$usage}
set=${2:?$usage}
case "$set" in
waitv | multiple) select="-L native -R \\.$set\$" ;;
wine32) select="-R ^(wine32-|wine-mixed-)" ;;
*) echo "$usage" >&2; exit 2 ;;
esac

echo "guest: $(uname -r), $(nproc) CPUs, tests: $set"
junit=$(mktemp /tmp/guest-ctest.XXXXXX.xml)
# shellcheck disable=SC2086 # $select is two options and their arguments
ctest --test-dir "$build" $select -j "$(nproc)" --output-on-failure --no-tests=error --output-junit "$junit"
rc=$?
# <testsuite ... tests="N" ... skipped="N" ...>; skipped tests have status="notrun".
attr() { sed -n "s/^[[:space:]]*$1=\"\\([0-9]*\\)\".*/\\1/p" "$junit" | head -1; }
tests=$(attr tests)
skipped=$(attr skipped)
notrun=$(sed -n 's/.*<testcase name="\([^"]*\)".* status="notrun".*/\1/p' "$junit" | tr '\n' ' ')
rm -f "$junit"
if [ -z "$tests" ] || [ -z "$skipped" ]; then
	echo "guest-ctest.sh: no JUnit report from ctest (exit $rc)"
	exit 1
fi
echo "guest-ctest.sh: $tests tests, $skipped skipped, ctest exit $rc"
if [ "$rc" = 0 ] && [ "$skipped" != 0 ] && [ "${WINSYNC_GUEST_ALLOW_SKIP:-0}" != 1 ]; then
	echo "guest-ctest.sh: skipped $notrun, but the guest kernel runs them ($set)"
	exit 1
fi
exit "$rc"
