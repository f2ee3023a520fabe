#!/bin/bash
# Build the winsync test kernel: Debian's linux-source-6.1 with the futex2
# series of kernel/patches/, configured from tinyconfig + kernel/winsync.config,
# plus the futex selftests as 64-bit and 32-bit programs.
#
#   kernel/build.sh              build (or reuse) the patched kernel
#   kernel/build.sh --unpatched  the same tree and config without the series
#   kernel/build.sh --debug      the patched kernel plus kernel/debug.config
#                                (KASAN, lockdep, UBSAN, fail_futex, ...)
#   kernel/build.sh --print-dir  print the output directory and exit
#   kernel/build.sh --force      rebuild even when the cache key matches
#
# Output: <cache>/kernel/<variant>/ with bzImage, selftests/64,
# selftests/32 and build.key (futex_fuzz is built apart: kernel/fuzz/build.sh); <cache> is ws_cache_dir of scripts/lib.sh
# ($WINSYNC_CACHE, else $XDG_CACHE_HOME/winsync, ~/.cache/winsync, /var/cache/winsync).
# The build is reused while the key (the patches, the fragments, the
# linux-source package version and this script) is unchanged. The source
# tree and the object directory stay in <cache>/kernel/<variant>.work/
# (src/, obj/): a changed key resets src/ to its pristine commit and applies
# the series again, and make rebuilds only what the changed files reach.
# WINSYNC_KERNEL_JOBS sets make -j (default: CPUs + 1).
# Needs the packages of `scripts/deps.sh kernel`; it installs nothing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../scripts/lib.sh
source "$here/../scripts/lib.sh"
variant=patched
force=0
print_dir=0
for arg in "$@"; do
	case "$arg" in
	--unpatched) variant=unpatched ;;
	--patched) variant=patched ;;
	--debug) variant=debug ;;
	--force) force=1 ;;
	--print-dir) print_dir=1 ;;
	-h | --help)
		sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "build.sh: unknown argument: $arg" >&2
		exit 2
		;;
	esac
done

cache=$(ws_cache_dir)
out=$cache/kernel/$variant
if [ "$print_dir" = 1 ]; then
	echo "$out"
	exit 0
fi

log() { echo "[kernel/build.sh] $*"; }
die() { echo "[kernel/build.sh] ERROR: $*" >&2; exit 1; }
t0=$(date +%s)

# --- dependencies (the `kernel` group of scripts/lib.sh) ----------------------
ws_require kernel || die "missing packages (see above)"
tarball=/usr/src/linux-source-6.1.tar.xz
[ -f "$tarball" ] || die "$tarball missing although linux-source-6.1 is installed"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)

# --- cache key --------------------------------------------------------------
patches=()
fragments=("$here/winsync.config")
[ "$variant" = debug ] && fragments+=("$here/debug.config")
if [ "$variant" != unpatched ]; then
	mapfile -t patches < <(find "$here/patches" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' \
		! -name '0000-*' | sort)
	[ ${#patches[@]} -gt 0 ] || die "no patches in $here/patches"
fi
key=$( {
	echo "variant=$variant linux-source-6.1=$srcver"
	cat "${fragments[@]}" "$here/build.sh"
	for p in "${patches[@]}"; do
		basename "$p"
		cat "$p"
	done
} | sha256sum | cut -d' ' -f1)

# One build of a variant at a time; a second one waits, then reuses it.
mkdir -p "$cache/kernel"
exec 9>"$cache/kernel/$variant.lock"
if ! flock -n 9; then
	log "waiting for another build of the $variant kernel"
	flock 9
fi

if [ "$force" = 0 ] && [ -f "$out/build.key" ] && [ "$(cat "$out/build.key")" = "$key" ] &&
	[ -f "$out/bzImage" ] && [ -d "$out/selftests/64" ] && [ -d "$out/selftests/32" ]; then
	log "up to date: $out (key ${key:0:12})"
	exit 0
fi

# --- tree -------------------------------------------------------------------
# Outputs go to $out.new and are swapped in at the end: a guest started
# meanwhile still finds the previous kernel. The tree and the objects are
# kept in $work for the next build.
final=$out
out=$final.new
work=$final.work
src=$work/src
obj=$work/obj
baseline="linux-source-6.1 $srcver (pristine)"
log "building $variant kernel in $final (linux-source-6.1 $srcver, key ${key:0:12})"
rm -rf "$out"
mkdir -p "$out" "$work"
pristine=""
if [ -d "$src/.git" ]; then
	pristine=$(cd "$src" && git log --format='%H %s' 2>/dev/null |
		sed -n "s/^\([0-9a-f]*\) $baseline\$/\1/p" | tail -1)
fi
if [ -n "$pristine" ]; then
	# Apply the series in a scratch worktree, then move the kept tree to
	# the result: git rewrites only the files that differ, so make
	# rebuilds only what they reach.
	log "applying ${#patches[@]} patches to the pristine tree (scratch worktree)"
	scratch=$work/scratch
	(cd "$src" && { git worktree remove --force "$scratch" 2>/dev/null || true; } &&
		rm -rf "$scratch" && git worktree prune &&
		git worktree add -q --detach "$scratch" "$pristine") || die "git worktree add failed"
	if [ ${#patches[@]} -gt 0 ]; then
		ws_git_am "$scratch" "${patches[@]}" ||
			die "git am failed: the series does not apply to linux-source-6.1 $srcver"
	fi
	head=$(cd "$scratch" && git rev-parse HEAD)
	(cd "$src" && git worktree remove --force "$scratch" && git worktree prune) ||
		die "git worktree remove failed"
	(
		cd "$src" &&
			{ git am --abort >/dev/null 2>&1 || true; } &&
			git reset -q --hard "$head" &&
			git clean -q -fdx
	) || die "cannot move $src to the patched commit"
else
	log "unpacking $tarball"
	rm -rf "$work"
	mkdir -p "$work/unpack"
	tar -xf "$tarball" -C "$work/unpack"
	mv "$work/unpack/linux-source-6.1" "$src"
	rmdir "$work/unpack"
	ws_git_baseline "$src" "$baseline" || die "git commit of the tree failed"
	if [ ${#patches[@]} -gt 0 ]; then
		log "applying ${#patches[@]} patches with git am"
		ws_git_am "$src" "${patches[@]}" ||
			die "git am failed: the series does not apply to linux-source-6.1 $srcver"
	fi
fi
[ ${#patches[@]} -gt 0 ] && (cd "$src" && git log --oneline | head -n "$((${#patches[@]} + 1))")

# --- config -----------------------------------------------------------------
log "configuring: tinyconfig + ${fragments[*]##*/}"
mkdir -p "$obj"
(
	cd "$src"
	make -s O="$obj" tinyconfig >/dev/null
	scripts/kconfig/merge_config.sh -O "$obj" -m "$obj/.config" "${fragments[@]}" \
		>"$out/merge_config.log" 2>&1
	make -s O="$obj" olddefconfig
) || die "configuration failed (see $out/merge_config.log)"
missing=0
while read -r opt; do
	if ! grep -q "^$opt=y" "$obj/.config"; then
		echo "[kernel/build.sh] config option lost after olddefconfig: $opt" >&2
		missing=1
	fi
done < <(cat "${fragments[@]}" | grep -o '^CONFIG_[A-Za-z0-9_]*=y' | sed 's/=y$//')
while read -r opt; do
	if grep -q "^$opt=" "$obj/.config"; then
		echo "[kernel/build.sh] config option set although a fragment turns it off: $opt" >&2
		missing=1
	fi
done < <(cat "${fragments[@]}" | sed -n 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1/p')
[ "$missing" = 0 ] || die "the fragments do not survive olddefconfig (see above)"
cp "$obj/.config" "$out/config"

# --- kernel -----------------------------------------------------------------
jobs=${WINSYNC_KERNEL_JOBS:-$(($(nproc) + 1))}
log "make -j$jobs bzImage (from nothing about 5 minutes on 2 cores, 15 with --debug; log: $out/build.log)"
t1=$(date +%s)
if ! (cd "$src" && make O="$obj" -j"$jobs" bzImage) >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log" >&2
	die "kernel build failed (full log: $out/build.log)"
fi
cp "$obj/arch/x86/boot/bzImage" "$out/bzImage"
log "bzImage built in $(($(date +%s) - t1)) s"

# --- selftests --------------------------------------------------------------
log "make headers"
(cd "$src" && make -s O="$obj" headers) >"$out/headers.log" 2>&1 || die "make headers failed (see $out/headers.log)"
st=tools/testing/selftests/futex/functional
for bits in 64 32; do
	log "building futex selftests ($bits-bit)"
	mkdir -p "$out/selftests/$bits"
	flags=""
	[ "$bits" = 32 ] && flags="-m32"
	if ! (cd "$src/$st" && CFLAGS="$flags" make OUTPUT="$out/selftests/$bits" \
		KHDR_INCLUDES="-isystem $obj/usr/include" top_srcdir="$src") \
		>"$out/selftests-$bits.log" 2>&1; then
		tail -30 "$out/selftests-$bits.log" >&2
		die "selftests ($bits-bit) failed to build (see $out/selftests-$bits.log)"
	fi
	cp "$src/$st/run.sh" "$out/selftests/$bits/"
done

echo "$key" >"$out/build.key"
rm -rf "$final.old"
[ -e "$final" ] && mv "$final" "$final.old"
mv "$out" "$final"
rm -rf "$final.old"
log "done in $(($(date +%s) - t0)) s: $final/bzImage, $final/selftests/{64,32}"
