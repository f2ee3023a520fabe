# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Shared by winsync's shell scripts: source it, do not run it.
#   ws_cache_dir            the build cache (kernel, Wine, Wine prefix): $WINSYNC_CACHE,
#                           else $XDG_CACHE_HOME/winsync, else $HOME/.cache/winsync,
#                           else /var/cache/winsync (CI runs without HOME)
#   ws_wineprefix DIR LOADER SERVER
#                           makes the Wine prefix DIR unless it is usable on this
#                           kernel; prints its path (ws_wineprefix_where: in the
#                           guest, not always DIR); ws_wineprefix_has32 DIR: has
#                           it the 32-bit side?
#   ws_as_root CMD...       runs CMD as root: directly when root, else through sudo
#   ws_packages GROUP...    prints the Debian packages of the groups
#   ws_install GROUP...     installs the packages of the groups that are missing
#   ws_missing GROUP...     prints the packages of the groups that are not installed
#   ws_require GROUP...     fails, naming the deps.sh command to run, unless every
#                           package of the groups is installed (installs nothing:
#                           for scripts that tests run)
#   ws_git_baseline DIR MSG commits an unpacked source tree as the pristine base
#                           of a patch series (the build's identity, not the user's)
#   ws_git_am DIR PATCH...  applies a series to that base with git am; on failure
#                           prints the patch that did not apply and returns 1
#   ws_step NAME...         starts a timed step of a script (ending the previous one)
#   ws_steps_table FILE     ends the last step; prints the steps' durations as a
#                           dated table (date, CPUs, load) and writes it to FILE:
#                           docs/figures.md copies its times from such tables
# Groups: core (library, tests), wine (Wine, mingw-w64: winsync.dll, demos),
# kernel (the patched kernel and the QEMU guest), wine-build (building Wine's
# ntdll/server from Debian's source), docs (man page checks, the examples),
# package (the Debian packages: dpkg-buildpackage, debhelper, lintian),
# i386 (32-bit programs: gcc -m32, Check for i386, the i686 mingw-w64 compiler
# for the 32-bit winsync.dll and Wine's 32-bit side to run it; wine/build.sh's
# 32-bit ntdll and loader need gcc -m32 and the i686 compiler; ws_install adds
# dpkg's i386 architecture first when a group names an :i386 package),
# fuzz (trinity, for kernel/run-debug.sh --long).

ws_cache_dir() {
	if [[ -n "${WINSYNC_CACHE:-}" ]]; then
		echo "$WINSYNC_CACHE"
	elif [[ -n "${XDG_CACHE_HOME:-}" ]]; then
		echo "$XDG_CACHE_HOME/winsync"
	elif [[ -n "${HOME:-}" && "$HOME" != / ]]; then
		echo "$HOME/.cache/winsync"
	else
		echo /var/cache/winsync
	fi
}

# Can this kernel execute i386 programs at all?  Not on an x86_64 kernel
# without IA32 emulation (some CI and cloud VMs): there the 32-bit tests of
# the host are skipped (CTest exit 77) and the QEMU guest, whose kernel has
# it, runs them.  The probe is the i386 C library's own loader (libc6:i386,
# scripts/deps.sh i386), an executable ELF32 file: exit 126 is ENOEXEC.
ws_kernel_runs_i386() {
	local loader=/lib/ld-linux.so.2
	# Not cached while the loader is missing: libc6:i386 may be installed later.
	[[ -e $loader ]] || return 1
	if [[ -z ${_ws_kernel_runs_i386:-} ]]; then
		_ws_kernel_runs_i386=no
		"$loader" --version >/dev/null 2>&1 && _ws_kernel_runs_i386=yes
	fi
	[[ $_ws_kernel_runs_i386 == yes ]]
}

# Has the running kernel futex_waitv (Linux 5.16)?  An empty call answers
# EINVAL where it has, ENOSYS where it has not (perl: always on Debian).
ws_kernel_has_futex_waitv() {
	[[ $(uname -m) == x86_64 ]] || return 1
	[[ $(perl -e 'syscall(449, 0, 0, 0, 0, 0); print $! + 0') == 22 ]]
}

# Debian's wine wrapper, and wineboot & co. through it (wineapploader calls
# wine-stable), start the 32-bit loader whenever wine32 is installed: where
# the kernel runs no i386 program (or with --always: a prefix without the
# 32-bit side, on which the 32-bit loader finds no kernel32.dll), put wine
# and wine-stable that start wine64 first in PATH (shims in DIR).  Nothing
# changes elsewhere.
ws_wine64_only() {
	local dir=$1 name
	[[ ${2:-} == --always ]] || ! ws_kernel_runs_i386 || return 0
	[[ -x /usr/lib/wine/wine64 ]] || return 0
	mkdir -p "$dir"
	for name in wine wine-stable; do
		printf '#!/bin/sh\nexec /usr/lib/wine/wine64 "$@"\n' >"$dir/$name"
		chmod +x "$dir/$name"
	done
	export WINELOADER=/usr/lib/wine/wine64 PATH="$dir:$PATH"
}

# Has the Wine prefix DIR its 32-bit side?  One made before wine32 was
# installed, or by a kernel without IA32 emulation, has an empty syswow64.
ws_wineprefix_has32() { [[ -f $1/drive_c/windows/syswow64/kernel32.dll ]]; }

ws_in_guest() { grep -qs 'winsync.job=' /proc/cmdline; }

# A prefix is usable here when wineboot finished it and, where the kernel
# runs i386 programs, it has its 32-bit side.  In the QEMU guest a prefix
# of the host without one is used as it is (by 64-bit programs only:
# ws_wineprefix_has32 tells callers), unless WINSYNC_GUEST_WOW64=1 asks for
# the 32-bit side: a prefix is about 700 MB a side, and the guest's overlay
# is a tmpfs in its memory.
ws_wineprefix_usable() {
	[[ -f $1/system.reg ]] || return 1
	ws_wineprefix_has32 "$1" || ! ws_kernel_runs_i386 ||
		{ ws_in_guest && [[ ${WINSYNC_GUEST_WOW64:-0} != 1 ]]; }
}

# The prefix to use for DIR: DIR, except in the QEMU guest when DIR exists
# and is not usable there: the guest sees the host through a read-only 9p
# share under an overlay, where removing DIR fails with EIO, so it keeps
# its own, DIR-guest, in the overlay.
ws_wineprefix_where() {
	if [[ -e $1 ]] && ! ws_wineprefix_usable "$1" && ws_in_guest; then
		echo "$1-guest"
	else
		echo "$1"
	fi
}

# ws_wineprefix DIR LOADER SERVER: makes the prefix of DIR (ws_wineprefix_where)
# with "LOADER wineboot -i" unless it is usable, under a lock, reports a
# creation on stderr and prints the prefix's path.  On the host it is built
# aside and renamed into place (an interrupted run leaves no half prefix);
# in the guest in place (the overlay renames no directory: mv would copy
# it, twice the memory; and the whole overlay goes with the guest).
ws_wineprefix() {
	local dir loader=$2 server=$3 start ms build
	dir=$(ws_wineprefix_where "$1")
	if ! ws_wineprefix_usable "$dir"; then
		mkdir -p "$(dirname "$dir")" || return 1
		(
			flock 9
			ws_wineprefix_usable "$dir" && exit 0
			start=$(date +%s%N)
			build=$dir.new
			! ws_in_guest || build=$dir
			rm -rf "$build"
			WINEPREFIX=$build "$loader" wineboot -i </dev/null >"$dir.log" 2>&1 &&
				WINEPREFIX=$build "$server" -w ||
				{ cat "$dir.log" >&2; echo "ws_wineprefix: wineboot failed for $dir" >&2; exit 1; }
			if [[ $build != "$dir" ]]; then
				rm -rf "$dir" && mv "$build" "$dir" || exit 1
			fi
			ms=$(( ($(date +%s%N) - start) / 1000000 ))
			printf 'Wine prefix: created %s in %d.%d s\n' "$dir" $((ms / 1000)) $((ms % 1000 / 100)) >&2
		) 9>"$dir.lock" || return 1
	fi
	echo "$dir"
}

ws_as_root() {
	if [[ $(id -u) -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "winsync: need root or sudo for: $*" >&2
		return 1
	fi
}

declare -gA WS_PACKAGE_GROUPS=(
	[core]="build-essential cmake pkg-config check strace python3"
	[wine]="wine wine64 gcc-mingw-w64-x86-64"
	[kernel]="linux-source-6.1 build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils gcc-multilib busybox-static qemu-system-x86 git make python3 perl"
	[wine-build]="dpkg-dev autoconf bison flex gcc-mingw-w64-x86-64 libxml-libxml-perl unicode-data khronos-api libvulkan-dev git xz-utils"
	[docs]="groff-base"
	[package]="dpkg-dev debhelper lintian fakeroot file"
	[i386]="gcc-multilib check:i386 libsubunit-dev:i386 gcc-mingw-w64-i686 wine32:i386"
	[fuzz]="trinity"
)

ws_packages() {
	local group
	for group in "$@"; do
		if [[ -z "${WS_PACKAGE_GROUPS[$group]:-}" ]]; then
			echo "winsync: unknown package group '$group'" >&2
			return 2
		fi
		echo "${WS_PACKAGE_GROUPS[$group]}"
	done
}

ws_missing() {
	local pkgs pkg
	pkgs=$(ws_packages "$@") || return
	for pkg in $pkgs; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
			echo "$pkg"
	done
}

ws_require() {
	local missing
	missing=$(ws_missing "$@") || return
	[[ -z "$missing" ]] && return 0
	echo "winsync: missing Debian packages: ${missing//$'\n'/ }" >&2
	echo "winsync: install them with: scripts/deps.sh $*" >&2
	return 1
}

ws_install() {
	local list want=()
	list=$(ws_missing "$@") || return
	[[ -z "$list" ]] && return 0
	mapfile -t want <<<"$list"
	# An :i386 package is reachable once dpkg knows the architecture (the
	# apt-get update below then fetches its lists).
	if [[ "$list" == *:i386* ]] && ! dpkg --print-foreign-architectures | grep -qx i386; then
		echo "winsync: adding dpkg's i386 architecture"
		ws_as_root dpkg --add-architecture i386
	fi
	echo "winsync: installing ${want[*]}"
	# Another apt run (a parallel job) holds the lock for a while: wait for it.
	# A mirror caught mid-sync fails one index ("File has unexpected size"):
	# try again, then go on with the lists there are and let install judge.
	local try updated=false
	for try in 1 2 3; do
		if ws_as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 \
			update -qq; then
			updated=true
			break
		fi
		echo "winsync: apt-get update failed (try $try of 3)" >&2
		[[ $try == 3 ]] || sleep $((try * 20))
	done
	ws_as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 \
		install -y -qq --no-install-recommends "${want[@]}" && return 0
	$updated && return 1
	# Seen: the security archive's i386 index stale on the mirror.  An :i386
	# library must then match its amd64 twin's version, which the amd64
	# security index raises beyond anything i386 has: the packages are not
	# installable together.  Once more with the security archive pinned
	# below the main one, for this one transaction (the machine's apt
	# configuration is left as it is), except for linux-source-6.1, whose
	# newest version is the one kernel/patches/ applies to.
	echo "winsync: installing again with the security archive pinned low" >&2
	local prefs rc=0
	prefs=$(mktemp -d /tmp/winsync-apt.XXXXXX)
	cat >"$prefs/winsync.pref" <<-EOF
		Package: *
		Pin: release l=Debian-Security
		Pin-Priority: 100

		Package: linux-source-6.1
		Pin: release l=Debian-Security
		Pin-Priority: 500
	EOF
	ws_as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 \
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts="$prefs" \
		install -y -qq --no-install-recommends "${want[@]}" || rc=$?
	rm -rf "$prefs"
	return $rc
}

# Kernel and Wine trees are patched with git am, under the build's own identity.
ws_git() {
	GIT_AUTHOR_NAME="winsync build" GIT_AUTHOR_EMAIL="build@winsync.invalid" \
	GIT_COMMITTER_NAME="winsync build" GIT_COMMITTER_EMAIL="build@winsync.invalid" \
		git "$@"
}

ws_git_baseline() {
	local dir=$1 message=$2
	(
		cd "$dir" &&
			ws_git init -q &&
			# Debian's trees ignore some of their own files (.gitignore): force.
			ws_git add -A -f . &&
			ws_git commit -q -m "$message"
	)
}

ws_git_am() {
	local dir=$1
	shift
	(cd "$dir" && ws_git am -q "$@") && return 0
	(cd "$dir" && ws_git am --show-current-patch=diff | head -40) >&2 || true
	return 1
}

# The time of each step of scripts/main.sh and scripts/test.sh, measured
# rather than guessed.
WS_STEP_NAMES=()
WS_STEP_SECONDS=()
ws_step_t0=""

ws_step_end() {
	if [[ -n $ws_step_t0 ]]; then
		WS_STEP_SECONDS+=($((SECONDS - ws_step_t0)))
		ws_step_t0=""
	fi
}

ws_step() {
	ws_step_end
	WS_STEP_NAMES+=("$*")
	ws_step_t0=$SECONDS
	printf '\n== %s (%s)\n' "$*" "$(date +%T)"
}

ws_steps_table() {
	local file=$1 i
	ws_step_end
	mkdir -p "$(dirname "$file")"
	{
		printf '%s, %s CPUs, load average %s at the end\n\n' "$(date -u '+%F %H:%M UTC')" \
			"$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
		printf '| step | seconds |\n| --- | ---: |\n'
		for i in "${!WS_STEP_NAMES[@]}"; do
			printf '| %s | %s |\n' "${WS_STEP_NAMES[$i]}" "${WS_STEP_SECONDS[$i]}"
		done
	} | tee "$file"
}
