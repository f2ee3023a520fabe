#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run one command in a QEMU guest booted on the kernel of kernel/build.sh.
#
#   image/run-guest.sh [options] -- COMMAND [ARG...]
#
# The guest sees the host root read-only over virtio 9p with a tmpfs overlay
# on top (it can write, nothing reaches the host), fresh /tmp, /dev/shm and
# /run, and every other path as on the host: host-built programs and the
# host's Wine run unchanged. The command runs as root in the current
# directory; its output (stdout and stderr together) is printed, and its exit
# status is returned. 2 vCPUs on 2 NUMA nodes, one socket each (two CPUs of
# one socket on two nodes make the kernel warn at boot), TCG unless --kvm.
#
# Options:
#   --mem MB        guest memory, split over the 2 nodes (default 2048)
#   --cpus 1|2      vCPUs (default 2, one per node; with 1, node 1 has memory
#                   only: a starved host makes two TCG vCPUs spin on each
#                   other's locks, slowest on the debug kernel)
#   --timeout SEC   hard limit for the whole run (default 900); exit 124
#   --kernel FILE   bzImage to boot (default: the patched build of
#                   kernel/build.sh, which must have run)
#   --unpatched     boot the --unpatched build of kernel/build.sh instead
#   --debug         boot the --debug build (KASAN, lockdep, UBSAN, fail_futex):
#                   SMAP on, every console message kept, an oops does not
#                   panic, and the time limit is 4 times longer
#   --no-smap       hide SMAP from the guest CPU (the default without --debug)
#   --kvm           use KVM (on some hosts QEMU aborts with "failed to set MSR
#                   0x10a" or hangs at boot with it: leave it off there)
#   --env NAME[=VALUE]  pass one more environment variable (repeatable)
#   --keep DIR      a host directory under /tmp, /dev/shm or /run that the
#                   guest must see anyway (this repository, the working
#                   directory and the cache are kept without asking)
#   --console       print the kernel console after the run
#   --append ARGS   more kernel command line (e.g. print-fatal-signals=1)
#   -v, --verbose   print the qemu command line and the boot time
#
# WINSYNC_GUEST_CONSOLE=FILE keeps a copy of the kernel console there.
#
# Passed from the environment: PATH HOME USER LANG LC_ALL TZ TERM, and every
# WINSYNC_*, WINE*, FUTEX2_*, CTEST_* and KSFT_* variable.
#
# The kernel log is checked after every run: a line with BUG:, WARNING:,
# KASAN:, UBSAN:, Oops, a lockdep report (lockdep is turned off after
# one), a hung task or an RCU stall is printed and fails the run.
#
# Exit status: the command's; 122 when the command succeeded but the kernel
# reported one of the problems above; 124 when the guest did not finish in
# time; 125 when it panicked or stopped without reporting a status; 126 for
# a usage or setup error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

mem=2048
cpus=2
timeout_s=900
kernel=""
variant=patched
smap=0
timeout_set=0
kvm=0
console=0
verbose=0
extra_env=()
keep_dirs=()
more_append=""

usage() { sed -n '3,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "run-guest.sh: $*" >&2; exit 126; }

while [ $# -gt 0 ]; do
	case "$1" in
	--mem) mem=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--timeout) timeout_s=$2; timeout_set=1; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--unpatched) variant=unpatched; shift ;;
	--debug) variant=debug; smap=1; shift ;;
	--no-smap) smap=0; nosmap=1; shift ;;
	--kvm) kvm=1; shift ;;
	--env) extra_env+=("$2"); shift 2 ;;
	--keep) keep_dirs+=("$(cd "$2" && pwd)") || die "no directory $2"; shift 2 ;;
	--console) console=1; shift ;;
	--append) more_append="$more_append $2"; shift 2 ;;
	-v | --verbose) verbose=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) die "unknown option $1 (the command goes after --)" ;;
	esac
done
[ $# -gt 0 ] || die "no command given: run-guest.sh [options] -- COMMAND..."
case "$mem" in '' | *[!0-9]*) die "--mem takes megabytes" ;; esac
[ "$mem" -ge 256 ] || die "--mem must be at least 256"
case "$cpus" in 1 | 2) ;; *) die "--cpus takes 1 or 2" ;; esac

[ "${nosmap:-0}" = 1 ] && smap=0
[ "$variant" = debug ] && [ "$timeout_set" = 0 ] && timeout_s=$((timeout_s * 4))
kdir=$("$repo/kernel/build.sh" --print-dir "--$variant")
cache=$(dirname "$(dirname "$kdir")")
[ -n "$kernel" ] || kernel=$kdir/bzImage
[ -f "$kernel" ] || die "no kernel at $kernel: run kernel/build.sh --$variant first"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
busybox=$(command -v busybox || true)
[ -x "$busybox" ] || die "busybox missing (apt-get install busybox-static)"
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked: apt-get install busybox-static"
fi

# --- initramfs (cached by the hash of busybox and init) ---------------------
imgdir=$cache/image
mkdir -p "$imgdir"
ikey=$(cat "$busybox" "$here/init" | sha256sum | cut -c1-16)
initrd=$imgdir/initramfs-$ikey.cpio.gz
if [ ! -f "$initrd" ]; then
	t=$(mktemp -d "$imgdir/initramfs.XXXXXX")
	mkdir -p "$t/bin" "$t/proc" "$t/sys" "$t/dev" "$t/host" "$t/rw" "$t/newroot"
	cp "$busybox" "$t/bin/busybox"
	cp "$here/init" "$t/init"
	chmod 755 "$t/init" "$t/bin/busybox"
	# A name of its own: guests started together (ctest -j) build it at once.
	tmp=$(mktemp "$initrd.XXXXXX")
	(cd "$t" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp" &&
		mv -f "$tmp" "$initrd"
	rm -rf "$t" "$tmp"
	[ -f "$initrd" ] || die "could not build the initramfs"
fi

# --- the job ----------------------------------------------------------------
mkdir -p "$imgdir/jobs"
jobdir=$(mktemp -d "$imgdir/jobs/run.XXXXXX")
cleanup() {
	[ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null
	rm -rf "$jobdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

{
	echo "# written by image/run-guest.sh"
	for v in PATH HOME USER LANG LC_ALL TZ TERM; do
		[ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"
	done
	while IFS= read -r v; do
		printf 'export %s=%q\n' "$v" "${!v}"
	done < <(compgen -e | grep -E '^(WINSYNC_|WINE|FUTEX2_|CTEST_|KSFT_)' || true)
	# The guest's scripts find the host's cache (kernel, Wine prefix) by it.
	printf 'export WINSYNC_CACHE=%q\n' "$cache"
	for e in "${extra_env[@]+"${extra_env[@]}"}"; do
		case "$e" in
		*=*) printf 'export %s=%q\n' "${e%%=*}" "${e#*=}" ;;
		*) [ -n "${!e+x}" ] && printf 'export %s=%q\n' "$e" "${!e}" ;;
		esac
	done
	printf 'cd %q || exit 126\n' "$PWD"
	printf 'exec'
	printf ' %q' "$@"
	printf '\n'
} >"$jobdir/job.sh"

# Host directories the fresh /tmp, /dev/shm or /run of the guest would hide
keep=""
for d in "$repo" "$jobdir" "$PWD" "$cache" "${keep_dirs[@]+"${keep_dirs[@]}"}"; do
	case "$d" in
	/tmp/* | /dev/shm/* | /run/*)
		case "$d" in *[[:space:]:]*) die "cannot pass $d into the guest (space or colon)" ;; esac
		keep="$keep${keep:+:}$d"
		;;
	esac
done

# --- qemu -------------------------------------------------------------------
half=$((mem / 2))
if [ "$kvm" = 1 ]; then
	accel=(-accel kvm -cpu host)
else
	# SMAP off by default: under TCG it breaks Wine (shared/FACTS.md).
	# No 5-level paging: with it, KASAN reported a wild access at boot in 1
	# of 3 debug boots on 2026-12-05 ("wild-memory-access in
	# rcu_is_watching", an interrupt inside identify_boot_cpu(), reading a
	# 5-level address ff11...): most likely an interrupt in the window where
	# identify_cpu() has the CPU's feature words, LA57 among them, cleared.
	accel=(-accel tcg,thread=multi -cpu "max,-la57$([ "$smap" = 1 ] || echo ,-smap)")
fi
if [ "$variant" = debug ]; then
	# Every message on the console (WARN and lockdep print at KERN_WARNING),
	# no panic on an oops or a warning: the log is checked after the run.
	# The longest lockup and stall thresholds: under TCG on a busy host a
	# vCPU can go unscheduled for tens of seconds, which is no kernel bug.
	append="console=ttyS0 loglevel=8 panic=-1 panic_on_warn=0 rdinit=/init"
	append="$append watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=300"
else
	append="console=ttyS0 loglevel=4 panic=-1 oops=panic rdinit=/init"
fi
append="$append winsync.job=$jobdir/job.sh"
[ -n "$keep" ] && append="$append winsync.keep=$keep"
append="$append$more_append"
qemu=(qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot
	"${accel[@]}" -smp "$cpus,sockets=$cpus,cores=1,threads=1" -m "${mem}M"
	-object "memory-backend-ram,id=m0,size=${half}M" -numa "node,nodeid=0,cpus=0,memdev=m0"
	-object "memory-backend-ram,id=m1,size=$((mem - half))M"
	-numa "node,nodeid=1,$([ "$cpus" = 2 ] && echo cpus=1,)memdev=m1"
	-kernel "$kernel" -initrd "$initrd" -append "$append"
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-chardev "file,id=con,path=$jobdir/console.log" -serial chardev:con
	-chardev "file,id=out,path=$jobdir/out" -serial chardev:out)
[ "$verbose" = 1 ] && echo "run-guest.sh: ${qemu[*]}" >&2

: >"$jobdir/out"
t0=$(date +%s.%N)
timeout -k 5 "$timeout_s" "${qemu[@]}" </dev/null >"$jobdir/qemu.log" 2>&1 &
qpid=$!
# Stream the command's output, without the status line, until qemu exits.
tail -n +1 -s 0.2 -f --pid="$qpid" "$jobdir/out" 2>/dev/null |
	grep --line-buffered -av '^WINSYNC-GUEST-EXIT: '
wait "$qpid"
qrc=$?
qpid=""
t1=$(date +%s.%N)

status=$(grep -a '^WINSYNC-GUEST-EXIT: ' "$jobdir/out" | tail -1 | tr -dc '0-9')
show_console() {
	echo "---- guest kernel console (last 40 lines) ----" >&2
	tail -n 40 "$jobdir/console.log" >&2
	if [ -s "$jobdir/qemu.log" ]; then
		echo "---- qemu ----" >&2
		tail -n 20 "$jobdir/qemu.log" >&2
	fi
}
[ "$verbose" = 1 ] && echo "run-guest.sh: guest ran $(echo "$t1 - $t0" | bc) s" >&2
[ "$console" = 1 ] && cat "$jobdir/console.log" >&2

# Kernel reports: printed, and they fail the run.
splat_re='BUG:|WARNING:|KASAN:|UBSAN:|Oops|kernel BUG at|general protection fault|lockdep is turned off|possible circular locking|INFO: task .* blocked for more than|rcu: INFO:|self-detected stall|Kernel panic'
splats=$(grep -aE "$splat_re" "$jobdir/console.log" | head -n 50)
if [ -n "$splats" ]; then
	echo "run-guest.sh: the guest kernel reported problems:" >&2
	echo "$splats" | sed 's/^/    /' >&2
	echo "---- the first report in full ----" >&2
	grep -anE "$splat_re" "$jobdir/console.log" | head -1 | cut -d: -f1 |
		while read -r n; do sed -n "$((n > 5 ? n - 5 : 1)),$((n + 60))p" "$jobdir/console.log"; done >&2
fi
if [ -n "${WINSYNC_GUEST_CONSOLE:-}" ]; then
	cp "$jobdir/console.log" "$WINSYNC_GUEST_CONSOLE"
fi

if [ -n "$status" ]; then
	[ "$status" = 0 ] && [ -n "$splats" ] && exit 122
	exit "$status"
fi
if [ "$qrc" = 137 ] || [ "$qrc" = 124 ]; then
	echo "run-guest.sh: the guest did not finish within $timeout_s s (killed)" >&2
	show_console
	exit 124
fi
if grep -aq 'Kernel panic' "$jobdir/console.log"; then
	echo "run-guest.sh: the guest kernel panicked" >&2
else
	echo "run-guest.sh: the guest stopped without reporting an exit status (qemu exit $qrc)" >&2
fi
show_console
exit 125
