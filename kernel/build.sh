#!/bin/bash
# Build the winsync test kernel: Debian's linux-source-6.1 with the futex2
# series of kernel/patches/, configured from tinyconfig + kernel/winsync.config,
# plus the futex selftests as 64-bit and 32-bit programs.
#
#   kernel/build.sh              build (or reuse) the patched kernel
#   kernel/build.sh --unpatched  the same tree and config without the series
#   kernel/build.sh --print-dir  print the output directory and exit
#   kernel/build.sh --force      rebuild even when the cache key matches
#
# Output: <cache>/kernel/<variant>/ with bzImage, selftests/64,
# selftests/32 and build.key; <cache> is ws_cache_dir of scripts/lib.sh
# ($WINSYNC_CACHE, else $XDG_CACHE_HOME/winsync, ~/.cache/winsync, /var/cache/winsync).
# The build is reused while the key (the patches, the fragment, the
# linux-source package version and this script) is unchanged.
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
	--force) force=1 ;;
	--print-dir) print_dir=1 ;;
	-h | --help)
		sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
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
if [ "$variant" = patched ]; then
	mapfile -t patches < <(find "$here/patches" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' \
		! -name '0000-*' | sort)
	[ ${#patches[@]} -gt 0 ] || die "no patches in $here/patches"
fi
key=$( {
	echo "variant=$variant linux-source-6.1=$srcver"
	cat "$here/winsync.config" "$here/build.sh"
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
# Build in $out.new and swap it in at the end: a guest started meanwhile
# still finds the previous kernel.
final=$out
out=$final.new
log "building $variant kernel in $final (linux-source-6.1 $srcver, key ${key:0:12})"
rm -rf "$out"
mkdir -p "$out"
src=$out/src
log "unpacking $tarball"
mkdir -p "$out/unpack"
tar -xf "$tarball" -C "$out/unpack"
mv "$out/unpack/linux-source-6.1" "$src"
rmdir "$out/unpack"

ws_git_baseline "$src" "linux-source-6.1 $srcver (pristine)" || die "git commit of the tree failed"
if [ "$variant" = patched ]; then
	log "applying ${#patches[@]} patches with git am"
	ws_git_am "$src" "${patches[@]}" ||
		die "git am failed: the series does not apply to linux-source-6.1 $srcver"
	(cd "$src" && git log --oneline | head -n "$((${#patches[@]} + 1))")
fi

# --- config -----------------------------------------------------------------
log "configuring: tinyconfig + winsync.config"
(
	cd "$src"
	make -s tinyconfig >/dev/null
	scripts/kconfig/merge_config.sh -m .config "$here/winsync.config" >"$out/merge_config.log" 2>&1
	make -s olddefconfig
)
missing=0
while read -r opt; do
	if ! grep -q "^$opt=y" "$src/.config"; then
		echo "[kernel/build.sh] config option lost after olddefconfig: $opt" >&2
		missing=1
	fi
done < <(grep -o '^CONFIG_[A-Za-z0-9_]*=y' "$here/winsync.config" | sed 's/=y$//')
[ "$missing" = 0 ] || die "winsync.config does not survive olddefconfig (see above)"
cp "$src/.config" "$out/config"

# --- kernel -----------------------------------------------------------------
jobs=$(($(nproc) + 1))
log "make -j$jobs bzImage (about 5 minutes on 2 cores; log: $out/build.log)"
t1=$(date +%s)
if ! (cd "$src" && make -j"$jobs" bzImage) >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log" >&2
	die "kernel build failed (full log: $out/build.log)"
fi
cp "$src/arch/x86/boot/bzImage" "$out/bzImage"
log "bzImage built in $(($(date +%s) - t1)) s"

# --- selftests --------------------------------------------------------------
log "make headers"
(cd "$src" && make -s headers) >"$out/headers.log" 2>&1 || die "make headers failed (see $out/headers.log)"
st=tools/testing/selftests/futex/functional
for bits in 64 32; do
	log "building futex selftests ($bits-bit)"
	mkdir -p "$out/selftests/$bits"
	flags=""
	[ "$bits" = 32 ] && flags="-m32"
	if ! (cd "$src/$st" && CFLAGS="$flags" make OUTPUT="$out/selftests/$bits" \
		KHDR_INCLUDES="-isystem $src/usr/include" top_srcdir="$src") \
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
