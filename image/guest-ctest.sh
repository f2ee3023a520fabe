#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run the native library tests of one futex backend; meant for the guest:
#
#   image/run-guest.sh -- image/guest-ctest.sh BUILD_DIR waitv|multiple
#
# Runs `ctest -L native -R '\.BACKEND$'` in BUILD_DIR. The guest kernel has
# futex_waitv and FUTEX_WAIT_MULTIPLE, so a skipped test (exit 77: backend
# missing) is a failure here, unless WINSYNC_GUEST_ALLOW_SKIP=1. The verdict
# comes from CTest's exit status and its JUnit report (--output-junit).
set -u
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
build=${1:?usage: guest-ctest.sh BUILD_DIR waitv|multiple}
backend=${2:?usage: guest-ctest.sh BUILD_DIR waitv|multiple}

echo "guest: $(uname -r), $(nproc) CPUs, backend $backend"
junit=$(mktemp /tmp/guest-ctest.XXXXXX.xml)
ctest --test-dir "$build" -L native -R "\\.$backend\$" --output-on-failure \
	--no-tests=error --output-junit "$junit"
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
	echo "guest-ctest.sh: skipped $notrun, but the guest kernel has the $backend backend"
	exit 1
fi
exit "$rc"
