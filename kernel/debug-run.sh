#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The checks of the debug kernel (kernel/build.sh --debug), run inside the
# guest by kernel/run-debug.sh:
#
#   image/run-guest.sh --debug -- kernel/debug-run.sh [options]
#
#   --selftests 64|32|both|none  the futex selftests (FUTEX2_REQUIRE=1)
#   --fault SECONDS     fail_futex: the fuzzer (64 and 32-bit side by side)
#                       for SECONDS with a fraction of the futex user-memory
#                       accesses of its fuzzing threads failing, once with
#                       ignore-private N and once with Y, then the selftests
#                       once with faults (they must finish, their results
#                       are counted, not judged)
#   --no-fault-selftests  --fault without the selftests
#   --fuzz SECONDS      futex_fuzz (kernel/fuzz/), 64 and 32-bit side by side
#   --fuzzer DIR        where futex_fuzz64 and futex_fuzz32 are (default:
#                       <cache>/kernel/fuzz, built by kernel/run-debug.sh)
#   --trinity SECONDS   Debian's trinity, the futex family only, as nobody,
#                       beside the fuzzer
#   --seed N            seed of the fuzzers (default 1)
#
# Each part prints its figures; the last line is "debug-run: N passed,
# N failed". Kernel reports (KASAN, lockdep, ...) are judged by
# image/run-guest.sh from the console after the run.
set -u
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
selftests=both fault=0 fault_selftests=1 fuzz=0 trinity=0 seed=1 fuzzer=""
while [ $# -gt 0 ]; do
	case "$1" in
	--selftests) selftests=$2; shift 2 ;;
	--fault) fault=$2; shift 2 ;;
	--no-fault-selftests) fault_selftests=0; shift ;;
	--fuzz) fuzz=$2; shift 2 ;;
	--trinity) trinity=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--fuzzer) fuzzer=$2; shift 2 ;;
	*) echo "debug-run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
kdir=$("$here/build.sh" --print-dir --debug)
fuzzer=${fuzzer:-$(dirname "$kdir")/fuzz}
pass=0 fail=0
result() {	# NAME OK DETAIL
	if [ "$2" = 0 ]; then
		pass=$((pass + 1)); echo "debug-run: PASS $1: $3"
	else
		fail=$((fail + 1)); echo "debug-run: FAIL $1: $3"
	fi
}
now() { date +%s; }

echo "debug-run: kernel $(uname -r), $(nproc) CPUs, $(grep -c . /sys/devices/system/node/possible) node line(s), SMAP $(grep -q -m1 -w smap /proc/cpuinfo && echo on || echo off)"

# --- selftests ----------------------------------------------------------------
run_selftests() {	# BITS
	local t0 out rc
	t0=$(now)
	out=$(FUTEX2_REQUIRE=1 "$here/run-selftests.sh" "$kdir/selftests/$1" 2>&1)
	rc=$?
	echo "$out" | grep -E '^(not ok|# failed)' | head -20
	result "selftests-$1" "$rc" "$(echo "$out" | tail -1) in $(($(now) - t0)) s"
}
case "$selftests" in
64 | 32) run_selftests "$selftests" ;;
both) run_selftests 64; run_selftests 32 ;;
none) ;;
*) echo "debug-run.sh: --selftests 64|32|both|none" >&2; exit 2 ;;
esac

# --- trinity ------------------------------------------------------------------
# Runs in the background beside the fuzzer; its verdict is written to a file.
trinity_run() {
	local d t0 rc calls
	d=$(mktemp -d /tmp/trinity.XXXXXX)
	chmod 777 "$d"
	t0=$(now)
	(cd "$d" && timeout -s INT -k 60 "$trinity" trinity -q -X --stats -l off -C 4 -s "$seed" \
		-c futex -c futex_waitv -c set_robust_list -c get_robust_list) >"$d/out" 2>&1
	rc=$?
	grep -vE '^\s*$' "$d/out" | tail -40 | sed 's/^/[trinity] /'
	calls=$(grep -oE '[0-9]+ iterations' "$d/out" | tail -1)
	# SIGINT (124 from timeout) ends it after its time: expected
	if [ "$rc" = 124 ] || [ "$rc" = 0 ] || [ "$rc" = 130 ]; then rc=0; fi
	grep -qi 'tainted' "$d/out" && rc=1
	echo "$rc ${calls:-? iterations} in $(($(now) - t0)) s" >/tmp/trinity.verdict
}

# --- fuzzer -------------------------------------------------------------------
# Runs futex_fuzz$1 for $2 s (tag $3, more options after); prints its
# summary; returns its status.
fuzz_run() {
	local bits=$1 secs=$2 tag=$3
	shift 3
	timeout -k 30 $((secs + 180)) "$fuzzer/futex_fuzz$bits" -s "$seed" -t "$secs" -j 4 "$@" \
		>"/tmp/fuzz-$tag-$bits.out" 2>"/tmp/fuzz-$tag-$bits.err"
	local rc=$?
	sed "s/^/[$tag $bits-bit] /" "/tmp/fuzz-$tag-$bits.out"
	head -20 "/tmp/fuzz-$tag-$bits.err" | sed "s/^/[$tag $bits-bit] /"
	# an abort's thread and backtrace (futex_fuzz's SIGABRT handler)
	grep -A 24 'SIGABRT in' "/tmp/fuzz-$tag-$bits.err" | sed "s/^/[$tag $bits-bit] /"
	[ "$rc" = 124 ] && echo "[$tag $bits-bit] futex_fuzz did not finish in time: a hang"
	return "$rc"
}
# The fuzzer (64 and 32-bit) and trinity run side by side.
ptr=""
if [ "$trinity" -gt 0 ]; then
	if ! command -v trinity >/dev/null; then
		result trinity 1 "trinity is not installed (scripts/deps.sh fuzz)"
	else
		trinity_run & ptr=$!
	fi
fi
if [ "$fuzz" -gt 0 ]; then
	fuzz_run 64 "$fuzz" fuzz & p64=$!
	fuzz_run 32 "$fuzz" fuzz & p32=$!
	wait "$p64"; r64=$?
	wait "$p32"; r32=$?
	result fuzz-64 "$r64" "$(grep -h 'unexpected results' /tmp/fuzz-fuzz-64.out | tail -1)"
	result fuzz-32 "$r32" "$(grep -h 'unexpected results' /tmp/fuzz-fuzz-32.out | tail -1)"
fi
if [ -n "$ptr" ]; then
	wait "$ptr"
	read -r rc rest </tmp/trinity.verdict
	result trinity "$rc" "$rest"
fi

# --- fault injection ----------------------------------------------------------
ff=/sys/kernel/debug/fail_futex
if [ "$fault" -gt 0 ]; then
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	if [ ! -d "$ff" ]; then
		result fault 1 "no $ff: the kernel has no CONFIG_FAIL_FUTEX"
	else
		budget=1000000000
		for ignore in N Y; do
			# 1 in 5 futex user-memory accesses fails, for the tasks that ask
			echo 20 >"$ff/probability"
			echo 1 >"$ff/interval"
			echo "$budget" >"$ff/times"
			echo 0 >"$ff/verbose"
			echo Y >"$ff/task-filter"
			echo "$ignore" >"$ff/ignore-private"
			t0=$(now)
			# -f: the fuzzing threads arm make-it-fail themselves (not
			# glibc's own waits: pthread_join() aborts on -EFAULT)
			fuzz_run 64 "$fault" "fault-private$ignore" -f & p64=$!
			fuzz_run 32 "$fault" "fault-private$ignore" -f & p32=$!
			wait "$p64"; r64=$?
			wait "$p32"; r32=$?
			injected=$((budget - $(cat "$ff/times")))
			echo 0 >"$ff/probability"
			result "fault-ignore-private-$ignore" "$((r64 | r32))" \
				"$injected faults injected in $(($(now) - t0)) s; 64-bit: $(grep -h 'unexpected results' "/tmp/fuzz-fault-private$ignore-64.out" | tail -1); 32-bit: $(grep -h 'unexpected results' "/tmp/fuzz-fault-private$ignore-32.out" | tail -1)"
		done
	fi
	# The selftests under faults: they see EFAULT where they expect
	# success, so they fail; they must end, without a hang or a splat.
	if [ -d "$ff" ] && [ "$fault_selftests" = 1 ]; then
		echo 20 >"$ff/probability"
		echo "$budget" >"$ff/times"
		echo N >"$ff/ignore-private"
		t0=$(now)
		# A test that gives up after an injected fault may leave its own
		# waiters waiting forever (futex_requeue_pi -b: its one requeue
		# fails, nobody else wakes them): 120 s per program, then its
		# threads' states are printed and it is killed. A task that the
		# kill does not end hangs the whole run: that is a kernel hang.
		out=$( (echo 1 >/proc/self/make-it-fail &&
			timeout -k 10 2400 env FUTEX2_REQUIRE=1 WINSYNC_SELFTEST_TIMEOUT=120 \
				"$here/run-selftests.sh" "$kdir/selftests/64") 2>&1)
		rc=$?
		injected=$((budget - $(cat "$ff/times")))
		echo 0 >"$ff/probability"
		echo "[fault selftests] $(echo "$out" | tail -1)"
		echo "$out" | grep -E '^(not ok|# ---- .*: exit [^0])|still running|^#   tid' |
			sed 's/^/[fault selftests] /' | head -60
		# 124: timeout, a hang. Test failures are expected.
		[ "$rc" = 124 ] && rc=1 || rc=0
		result fault-selftests "$rc" "$injected faults injected in $(($(now) - t0)) s; $(echo "$out" | grep -c 'still running') programs killed after 120 s; $(echo "$out" | tail -1)"
	fi
fi

echo "debug-run: $pass passed, $fail failed"
[ "$fail" = 0 ]
