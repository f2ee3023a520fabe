#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run the futex selftests built by kernel/build.sh and sum up their TAP.
#
#   kernel/run-selftests.sh DIR [PROGRAM...]
#   kernel/run-selftests.sh --bits 64|32 [--unpatched] [PROGRAM...]
#
# DIR is a selftests directory of the build (…/selftests/64 or …/32); with
# --bits, that of the patched build of kernel/build.sh (the selftests come
# from the patched tree even with --unpatched, which only names the kernel
# they are meant for in the summary).
# Without PROGRAMs it runs every invocation listed in DIR/run.sh, the
# kselftest order. Each program prints TAP; a program that exits with
# KSFT_SKIP (4) or prints only skips counts as skipped, a crash or any other
# non-zero exit as failed. The last line is "N passed, N failed, N skipped"
# (tests, not programs). Exit status: 0 when nothing failed and at least
# one program ran; 1 when a test failed or no program ran at all (an empty
# run.sh or PROGRAM list, or a directory without run.sh); 2 for a bad DIR.
#
# FUTEX2_REQUIRE=1 in the environment turns "this kernel lacks the feature"
# from a skip into a failure: set it when the kernel carries the series.
# WINSYNC_SELFTEST_TIMEOUT=SECONDS limits each program: one still running
# then has its threads' states printed (state, wchan, the system call it
# is in) and is killed with SIGKILL; it counts as failed. A task that the
# kill does not end would hang the run instead (used under fault injection,
# where a test that gives up after an injected fault may leave its own
# waiters waiting forever).
set -u
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --bits ]; then
	bits=${2:?--bits 64 or 32}
	shift 2
	dir=$("$here/build.sh" --print-dir)/selftests/$bits
else
	dir=${1:?usage: run-selftests.sh DIR [PROGRAM...]}
	shift
fi
cd "$dir" || exit 2

if [ $# -gt 0 ]; then
	list=$(printf '%s\n' "$@")
else
	list=$(sed -n 's/^\.\/\([^ ]*\)\(.*\)$/\1\2/p' run.sh | sed 's/ *\$COLOR//')
fi

pass=0 fail=0 skip=0 progs=0 bad_progs=""
out=$(mktemp)
: >"$out.results"
echo "$list" | while IFS= read -r cmd; do
	[ -n "$cmd" ] || continue
	echo "# ---- ./$cmd"
	# shellcheck disable=SC2086
	./$cmd >"$out" 2>&1 &
	pid=$!
	if [ -n "${WINSYNC_SELFTEST_TIMEOUT:-}" ]; then
		(
			sleep "$WINSYNC_SELFTEST_TIMEOUT"
			kill -0 "$pid" 2>/dev/null || exit 0
			echo "# ---- ./$cmd: still running after $WINSYNC_SELFTEST_TIMEOUT s; its threads:"
			for t in /proc/"$pid"/task/*; do
				echo "#   tid ${t##*/}: $(sed -n 's/^State:[[:space:]]*//p' "$t/status"), wchan $(cat "$t/wchan" 2>/dev/null), syscall $(cat "$t/syscall" 2>/dev/null)"
			done
			kill -KILL "$pid"
		) &
		dog=$!
	fi
	wait "$pid"
	rc=$?
	[ -z "${WINSYNC_SELFTEST_TIMEOUT:-}" ] || { kill "$dog" 2>/dev/null; wait "$dog" 2>/dev/null; }
	cat "$out"
	p=$(grep -c '^ok [0-9]* [^#]*$' "$out")
	s=$(grep -c '^ok [0-9]* .*# SKIP' "$out")
	f=$(grep -c '^not ok ' "$out")
	if grep -q '^1\.\.0 # SKIP' "$out"; then
		s=$((s + 1))
	fi
	if [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$f" = 0 ]; then
		f=1	# crashed or bailed out without a "not ok" line
	fi
	echo "# ---- ./$cmd: exit $rc, pass $p, fail $f, skip $s"
	echo "RESULT $p $f $s $rc $cmd" >>"$out.results"
done
while read -r tag p f s rc cmd; do
	[ "$tag" = RESULT ] || continue
	progs=$((progs + 1))
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))
	[ "$f" = 0 ] || bad_progs="$bad_progs $cmd"
done <"$out.results"
rm -f "$out" "$out.results"
[ -z "$bad_progs" ] || echo "# failed:$bad_progs"
echo "futex selftests ($dir, kernel $(uname -r), $progs program runs): $pass passed, $fail failed, $skip skipped"
if [ "$progs" = 0 ]; then
	echo "run-selftests.sh: no test program ran (empty list or no run.sh in $dir)" >&2
	exit 1
fi
[ "$fail" = 0 ]
