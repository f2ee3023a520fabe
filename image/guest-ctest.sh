#!/bin/sh
# Run the native library tests of one futex backend; meant for the guest:
#
#   image/run-guest.sh -- image/guest-ctest.sh BUILD_DIR waitv|multiple
#
# Runs `ctest -L native -R '\.BACKEND$'` in BUILD_DIR. The guest kernel has
# futex_waitv and FUTEX_WAIT_MULTIPLE, so a skipped test (exit 77: backend
# missing) is a failure here, unless WINSYNC_GUEST_ALLOW_SKIP=1.
set -u
build=${1:?usage: guest-ctest.sh BUILD_DIR waitv|multiple}
backend=${2:?usage: guest-ctest.sh BUILD_DIR waitv|multiple}

echo "guest: $(uname -r), $(nproc) CPUs, backend $backend"
log=$(mktemp)
ctest --test-dir "$build" -L native -R "\\.$backend\$" --output-on-failure \
	--no-tests=error >"$log" 2>&1
rc=$?
cat "$log"
skipped=$(grep -c '\*\*\*Skipped\|Not Run' "$log")
rm -f "$log"
if [ "$rc" = 0 ] && [ "$skipped" != 0 ] && [ "${WINSYNC_GUEST_ALLOW_SKIP:-0}" != 1 ]; then
	echo "guest-ctest.sh: $skipped test(s) skipped, but the guest kernel has the $backend backend"
	exit 1
fi
exit "$rc"
