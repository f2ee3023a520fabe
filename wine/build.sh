#!/bin/bash
# Builds Wine's ntdll, wineserver and loader with the winsync backend, from
# Debian's wine source package (the version of the installed wine64), plus
# the Wine conformance test programs CTest runs (test_dirs below); then the
# 32-bit side, Wine 8's classic WoW64 layout: a 32-bit ntdll and loader of
# the same patched source, built against the 64-bit tree (--with-wine64),
# and the 32-bit test programs of test_dirs32.  Only what the hybrid tree
# needs is built: every other DLL comes from the installed Wine (wine64 and
# wine32:i386).
#
#   wine/build.sh              build (or reuse) the patched tree
#   wine/build.sh --print-dir  print the tree's directory and exit
#   wine/build.sh --force      rebuild even when the cache key matches
#   wine/build.sh --keep       keep the source and object trees
#                              (<cache>/wine/work) for incremental work
#
# Output: <cache>/wine/tree/ (dlls/ntdll/ntdll.so, dlls/ntdll/x86_64-windows/
# ntdll.dll, server/wineserver, loader/wine64, tests/*.exe, build.key; the
# 32-bit tree in wow32/: dlls/ntdll/ntdll.so, dlls/ntdll/i386-windows/ntdll.dll,
# loader/wine, tests/*.exe; loader/wine links to it, its loader/wine64 back), where
# <cache> is $WINSYNC_CACHE (scripts/lib.sh: ws_cache_dir).  The tree is
# reused while the key (the wine source version, wine/patches/*.patch,
# include/winsync.h and this script) is unchanged; the test programs are
# cached apart, keyed by the source version only.  wine/run.sh runs it.
#
# The patched ntdll and wineserver load libwinsync.so.0 with dlopen() only
# when WINEWINSYNC=1, so the build does not depend on the library's build.
#
# Packages: scripts/deps.sh wine wine-build i386 (the README's commands do it).
# The deb-src line for bookworm main is added here when it is missing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=../scripts/lib.sh
source "$repo/scripts/lib.sh"

force=0
keep=0
print_dir=0
for arg in "$@"; do
	case "$arg" in
	--force) force=1 ;;
	--keep) keep=1 ;;
	--print-dir) print_dir=1 ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "wine/build.sh: unknown argument: $arg" >&2; exit 2 ;;
	esac
done

cache=$(ws_cache_dir)/wine
final=$cache/tree
if [[ $print_dir == 1 ]]; then
	echo "$final"
	exit 0
fi

t0=$(date +%s)
log() { printf '[wine/build.sh %4ss] %s\n' "$(($(date +%s) - t0))" "$*"; }
die() { echo "[wine/build.sh] ERROR: $*" >&2; exit 1; }

# --- packages (installed by scripts/deps.sh, only checked here) ------------
missing=()
for p in $(ws_packages wine wine-build i386); do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] || die "missing packages: ${missing[*]} (run scripts/deps.sh wine wine-build i386)"
srcver=$(dpkg-query -W -f='${Version}' wine64)
wine_libdir=/usr/lib/x86_64-linux-gnu/wine
[[ -f $wine_libdir/x86_64-windows/kernel32.dll ]] || die "no installed 64-bit Wine in $wine_libdir"
wine_libdir32=/usr/lib/i386-linux-gnu/wine
[[ -f $wine_libdir32/i386-windows/kernel32.dll ]] || die "no installed 32-bit Wine (wine32:i386) in $wine_libdir32"
[[ $(dpkg-query -W -f='${Version}' wine32:i386) == "$srcver" ]] ||
	die "wine32:i386 $(dpkg-query -W -f='${Version}' wine32:i386) is not wine64's version $srcver"

# Wine's conformance test programs that CTest runs (wine/CMakeLists.txt,
# wine/units.txt): kernel32 and ntdll, and the DLLs built on waits whose
# tests Debian's package does not ship.  They depend on the source version
# only and are cached apart (<cache>/tests/<version>).
test_dirs=(dlls/kernel32/tests dlls/ntdll/tests dlls/kernelbase/tests dlls/ws2_32/tests
	dlls/rpcrt4/tests dlls/ole32/tests dlls/combase/tests dlls/advapi32/tests
	programs/services/tests dlls/ucrtbase/tests dlls/msvcr100/tests dlls/msvcr120/tests
	dlls/msvcp120/tests dlls/msvcp140/tests dlls/concrt140/tests dlls/vcomp/tests
	dlls/threadpoolwinrt/tests dlls/rtworkq/tests)
# The 32-bit test programs (wine/units.txt's kernel32 and ntdll units, 32-bit),
# cached apart too (<cache>/tests32/<version>).
test_dirs32=(dlls/kernel32/tests dlls/ntdll/tests)
# dlls/NAME/tests builds NAME_test.exe, programs/NAME/tests NAME.exe_test.exe
test_exe() {
	local d=${1%/tests}
	if [[ $d == programs/* ]]; then echo "${d#programs/}.exe_test.exe"; else echo "${d#dlls/}_test.exe"; fi
}

mapfile -t patches < <(find "$here/patches" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' \
	! -name '0000-*' 2>/dev/null | sort)
key=$( {
	echo "wine=$srcver"
	cat "$here/build.sh" "$repo/include/winsync.h"
	for p in "${patches[@]}"; do
		basename "$p"
		cat "$p"
	done
} | sha256sum | cut -c1-16)

mkdir -p "$cache"
exec 9>"$cache/build.lock"
if ! flock -n 9; then
	log "waiting for another build"
	flock 9
fi
if [[ $force == 0 && -f $final/build.key && $(cat "$final/build.key") == "$key" ]]; then
	log "up to date: $final (wine $srcver, ${#patches[@]} patches, key $key)"
	exit 0
fi
log "building wine $srcver with ${#patches[@]} patches (key $key) in $cache"

# --- source ------------------------------------------------------------------
dl=$cache/download/$srcver
dsc=$dl/wine_${srcver#*:}.dsc
if [[ ! -f $dsc ]]; then
	list=/etc/apt/sources.list.d/winsync-deb-src.sources
	if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		log "adding a deb-src line for bookworm main ($list)"
		printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm' \
			'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
			ws_as_root tee "$list" >/dev/null
		# An index of another archive stale on the mirror fails the update
		# but not this one (seen: the security archive's i386 index).
		ws_as_root apt-get -o DPkg::Lock::Timeout=900 update -qq ||
			log "apt-get update failed: apt-get source tries the lists there are"
	fi
	log "apt-get source --download-only wine=$srcver"
	rm -rf "$dl.tmp" && mkdir -p "$dl.tmp"
	(cd "$dl.tmp" && apt-get source -qq --download-only "wine=$srcver") >"$cache/download.log" 2>&1 ||
		{ tail -20 "$cache/download.log" >&2; die "apt-get source wine=$srcver failed"; }
	rm -rf "$dl" && mv "$dl.tmp" "$dl"
fi

work=$cache/work
src=$work/src
obj=$work/build
rm -rf "$work"
mkdir -p "$work"
log "unpacking with Debian's patches (dpkg-source -x)"
dpkg-source -q -x "$dsc" "$src" >"$work/dpkg-source.log" 2>&1 ||
	{ tail -20 "$work/dpkg-source.log" >&2; die "dpkg-source -x failed"; }

ws_git_baseline "$src" "wine $srcver with Debian's patches (pristine)" || die "git commit of the tree failed"
if [[ ${#patches[@]} -gt 0 ]]; then
	log "applying ${#patches[@]} patches with git am"
	ws_git_am "$src" "${patches[@]}" || die "git am failed: the series does not apply to wine $srcver"
	(cd "$src" && git log --format='  %h %s' -n "${#patches[@]}")
fi

# --- generated files -----------------------------------------------------------
# What Debian's rules generate before configure, reduced to what ntdll, the
# server, the loader and the tests need.  Nothing here is committed.
log "preparing the tree: tests back in configure.ac, generated files"
(
	cd "$src"
	# Debian drops some test directories from configure.ac (kernel32, ntdll,
	# rpcrt4, ...) and the generated.c of all tests: put ours back.
	for d in "${test_dirs[@]}"; do
		grep -q "^WINE_CONFIG_MAKEFILE($d)\$" configure.ac ||
			sed -i "s|^WINE_CONFIG_MAKEFILE(${d%/tests})\$|&\\nWINE_CONFIG_MAKEFILE($d)|" configure.ac
		grep -q "^WINE_CONFIG_MAKEFILE($d)\$" configure.ac || die "could not enable $d in configure.ac"
		sed -i '/generated\.c/d' "$d/Makefile.in"
	done
	cp /usr/share/autoconf/build-aux/config.sub /usr/share/autoconf/build-aux/config.guess tools/
	# The core's API, which the patched server and ntdll include (they dlopen the library).
	cp "$repo/include/winsync.h" include/
	# The server protocol (make_requests fills in Debian's emptied files).
	./debian/scripts/generate server/trace.generated make_requests
	./debian/scripts/generate server/request.generated make_requests
	./tools/make_requests >/dev/null
	# makedep reads every Makefile.in: the files they list must exist.
	(cd dlls/opengl32 && ./make_opengl) >/dev/null
	(cd dlls/winevulkan && ./make_vulkan -x /usr/share/vulkan/registry/vk.xml) >/dev/null
	(cd dlls/dsound && ./make_fir) >/dev/null 2>&1
	grep -E '^\s+ln -sf \.\./\.\./' debian/rules | sed 's/^\s*//' | sh -e
	# make_unicode's output (7 minutes) is needed by none of the parts built
	# here: empty stand-ins for its sources, the installed Wine's NLS files.
	for f in dlls/gdi32/uniscribe/{bracket,direction,indicsyllable,linebreak,mirror,shaping}.c \
		dlls/dwrite/{bracket,direction,linebreak,mirror,scripts}.c dlls/dwrite/scripts.h \
		dlls/dwrite/shapers/arabic_table.c dlls/win32u/vertical.c dlls/wineps.drv/vertical.c \
		dlls/kernelbase/kernelbase.rgs dlls/tzres/tzres.rc; do
		[[ -e $f ]] || : >"$f"
	done
	for f in /usr/share/wine/nls/*.nls; do
		[[ -e nls/${f##*/} ]] || ln -s "$f" nls/
	done
	autoreconf -f >/dev/null 2>&1 || die "autoreconf failed"
)

# --- configure and build -------------------------------------------------------
mkdir -p "$obj"
common_flags=(--with-mingw --enable-tests
	--without-x --without-freetype --without-gnutls --without-oss --without-sane
	--without-netapi --without-cups --without-gstreamer --without-pulse --without-alsa
	--without-vulkan --without-opengl --without-capi --without-krb5 --without-gssapi
	--without-usb --without-v4l2 --without-sdl --without-udev --without-dbus
	--without-pcap)
flags=(--enable-win64 "${common_flags[@]}")
# configure's checks depend on the source version, the flags and the system:
# their results are cached across patch changes (config.cache, -C).
ccache=$cache/configure/$srcver-$(echo "${flags[*]} $(dpkg-query -W -f='${Version}' gcc gcc-mingw-w64-x86-64 libc6-dev)" |
	sha256sum | cut -c1-12).cache
mkdir -p "$cache/configure"
log "configure (about 1 minute, less with $(basename "$ccache"); log: $obj/configure.log)"
(cd "$obj" && nice "$src/configure" --cache-file="$ccache" "${flags[@]}") >"$obj/configure.log" 2>&1 ||
	{ rm -f "$ccache"; tail -20 "$obj/configure.log" >&2; die "configure failed"; }

jobs=$(($(nproc) + 1))
# mk_in DIR WHAT TARGET...: make in the object tree DIR
mk_in() {
	local dir=$1 what=$2; shift 2
	log "make $what (log: $dir/make-$what.log)"
	if ! (cd "$dir" && nice make -j"$jobs" "$@") >"$dir/make-$what.log" 2>&1; then
		grep -E 'error|Error' "$dir/make-$what.log" | head -30 >&2
		die "make $what failed (see $dir/make-$what.log)"
	fi
}
mk() { mk_in "$obj" "$@"; }
# The build tree's ntdll includes a generated version.h next to its sources.
(cd "$obj" && make -s dlls/ntdll/unix/version.h) && cp "$obj/dlls/ntdll/unix/version.h" "$src/dlls/ntdll/unix/"
mk ntdll-server-loader dlls/ntdll/all server/wineserver loader/wine64 loader/wine64-preloader loader/wine.inf
# the Wine tools that the 32-bit tree uses from this one (--with-wine64)
mk tools tools/winebuild/all tools/winegcc/all tools/wrc/all tools/widl/all tools/wmc/all

tests=$cache/tests/$srcver
missing=()
for d in "${test_dirs[@]}"; do
	[[ -f $tests/$(test_exe "$d") ]] || missing+=("$d")
done
if [[ ${#missing[@]} -gt 0 ]]; then
	mk tests "${missing[@]/%//all}"
	mkdir -p "$tests.tmp"
	[[ -d $tests ]] && cp "$tests"/*.exe "$tests.tmp/"
	for d in "${missing[@]}"; do
		cp "$obj/$d/x86_64-windows/$(test_exe "$d")" "$tests.tmp/"
	done
	rm -rf "$tests" && mv "$tests.tmp" "$tests"
else
	log "test programs cached: $tests"
fi

# --- the 32-bit side ---------------------------------------------------------------
# Wine 8's classic WoW64: a 32-bit tree configured with --with-wine64 (its
# tools are the 64-bit tree's), whose loader/wine runs 32-bit programs; the
# server is the 64-bit tree's, the arena the same.
obj32=$work/build32
mkdir -p "$obj32"
flags32=(--with-wine64="$obj" "${common_flags[@]}")
ccache32=$cache/configure/$srcver-i386-$(echo "${flags32[*]} $(dpkg-query -W -f='${Version}' \
	gcc gcc-mingw-w64-i686 libc6-dev-i386)" | sha256sum | cut -c1-12).cache
log "configure the 32-bit tree (log: $obj32/configure.log)"
(cd "$obj32" && nice "$src/configure" --cache-file="$ccache32" "${flags32[@]}") >"$obj32/configure.log" 2>&1 ||
	{ rm -f "$ccache32"; tail -20 "$obj32/configure.log" >&2; die "32-bit configure failed"; }
mk_in "$obj32" ntdll-loader-32 dlls/ntdll/all loader/wine loader/wine-preloader

tests32=$cache/tests32/$srcver
missing=()
for d in "${test_dirs32[@]}"; do
	[[ -f $tests32/$(test_exe "$d") ]] || missing+=("$d")
done
if [[ ${#missing[@]} -gt 0 ]]; then
	mk_in "$obj32" tests-32 "${missing[@]/%//all}"
	mkdir -p "$tests32.tmp"
	[[ -d $tests32 ]] && cp "$tests32"/*.exe "$tests32.tmp/"
	for d in "${missing[@]}"; do
		cp "$obj32/$d/i386-windows/$(test_exe "$d")" "$tests32.tmp/"
	done
	rm -rf "$tests32" && mv "$tests32.tmp" "$tests32"
else
	log "32-bit test programs cached: $tests32"
fi

# --- the hybrid tree -------------------------------------------------------------
# A build-tree layout (ntdll.so in dlls/ntdll makes ntdll use build_dir mode:
# it starts ../../server/wineserver and finds NLS files in nls/); every other
# DLL and program comes from the installed Wine through WINEDLLPATH.
log "assembling $final"
new=$final.new
rm -rf "$new"
mkdir -p "$new"/{dlls/ntdll/x86_64-windows,dlls/apisetschema/x86_64-windows,server,loader,nls,tests}
cp "$obj/dlls/ntdll/ntdll.so" "$new/dlls/ntdll/"
cp "$obj/dlls/ntdll/x86_64-windows/ntdll.dll" "$new/dlls/ntdll/x86_64-windows/"
cp "$obj/server/wineserver" "$new/server/"
cp "$obj"/loader/{wine64,wine64-preloader,wine.inf} "$new/loader/"
ln -s "$wine_libdir/x86_64-windows/apisetschema.dll" "$new/dlls/apisetschema/x86_64-windows/"
for f in /usr/share/wine/nls/*.nls; do ln -s "$f" "$new/nls/"; done
cp "$tests"/*.exe "$new/tests/"
# The 32-bit tree (its own build_dir: nls/, apisetschema, ntdll); the 64-bit
# loader execs loader/wine for a 32-bit program, the 32-bit one loader/wine64
# for a 64-bit one and, to start the server, ../server/wineserver beside the
# real loader/wine64.
w32=$new/wow32
mkdir -p "$w32"/{dlls/ntdll/i386-windows,dlls/apisetschema/i386-windows,loader,nls,tests}
cp "$obj32/dlls/ntdll/ntdll.so" "$w32/dlls/ntdll/"
cp "$obj32/dlls/ntdll/i386-windows/ntdll.dll" "$w32/dlls/ntdll/i386-windows/"
cp "$obj32"/loader/{wine,wine-preloader} "$w32/loader/"
ln -s ../../loader/wine64 "$w32/loader/wine64"
ln -s ../../loader/wine64-preloader "$w32/loader/wine64-preloader"
ln -s ../wow32/loader/wine "$new/loader/wine"
ln -s ../wow32/loader/wine-preloader "$new/loader/wine-preloader"
ln -s "$wine_libdir32/i386-windows/apisetschema.dll" "$w32/dlls/apisetschema/i386-windows/"
for f in /usr/share/wine/nls/*.nls; do ln -s "$f" "$w32/nls/"; done
cp "$tests32"/*.exe "$w32/tests/"
(cd "$src" && git log --format='%h %s' "HEAD~${#patches[@]}..HEAD") >"$new/patches.txt"
echo "$srcver" >"$new/wine-version"
echo "$key" >"$new/build.key"
rm -rf "$final.old"
[[ -e $final ]] && mv "$final" "$final.old"
mv "$new" "$final"
rm -rf "$final.old"
if [[ $keep == 0 ]]; then
	rm -rf "$work"
else
	log "kept the source and object trees in $work"
fi
log "done: $final"
