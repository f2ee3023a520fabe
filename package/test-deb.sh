#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian packages, as a Debian maintainer builds and checks them:
# dpkg-buildpackage -us -uc -b on a copy of the source tree (debian/),
# lintian on the result (no error, no warning, pedantic and info tags
# included, unless debian/*.lintian-overrides gives the reason), the
# symbols file against libwinsync.map, the packages' fields and contents
# (stripped libraries, -dbgsym packages, copyright), then dpkg -i into a
# scratch root (whose package database is a copy of this system's entries
# for the dependencies), the consumer built against it both ways, and
# dpkg --purge leaves nothing behind.
#   test-deb.sh --source SOURCE_DIR --work DIR --consumer DIR
# Environment: CC, WINSYNC_VERSION (as for test-consumer.sh).
# The package build skips the library's own tests (DEB_BUILD_OPTIONS=nocheck):
# CTest runs them apart.
set -euo pipefail
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
source="" work="" consumer=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --source) source=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --consumer) consumer=$2; shift 2 ;;
    *) echo "test-deb.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -f $source/debian/control && -n $work && -d $consumer ]] ||
  { echo "usage: test-deb.sh --source SOURCE_DIR --work DIR --consumer DIR" >&2; exit 2; }
fail() { echo "test-deb.sh: $*" >&2; exit 1; }
# shellcheck source=../scripts/lib.sh
source "$here/../scripts/lib.sh"
ws_require package || exit 1
version=${WINSYNC_VERSION:?WINSYNC_VERSION not set}

# debian/changelog names the version that CMake builds.
deb_version=$(cd "$source" && dpkg-parsechangelog -S Version)
[[ ${deb_version%-*} == "$version" ]] ||
  fail "debian/changelog is at $deb_version, the project at $version: add a changelog entry"

# The symbols file lists every symbol of libwinsync.map under its version
# node, and nothing else (dh_makeshlibs -c4 then checks it against the
# library itself).
from_map=$(awk '/^WINSYNC_[0-9.]+ *\{/ { node = $1 }
  /^[ \t]+ws_[a-z0-9_]+;/ { gsub(/[ \t;]/, ""); print $0 "@" node }' "$source/winsync/libwinsync.map" | sort)
in_symbols=$(awk '/^ ws_/ { print $1 }' "$source/debian/libwinsync0.symbols" | sort)
[[ -n $from_map ]] || fail "no symbols read from winsync/libwinsync.map"
if [[ $from_map != "$in_symbols" ]]; then
  diff <(echo "$from_map") <(echo "$in_symbols") >&2 || true
  fail "debian/libwinsync0.symbols differs from winsync/libwinsync.map (< map, > symbols file)"
fi
echo "debian/libwinsync0.symbols: the $(wc -l <<<"$from_map") symbols of libwinsync.map"

# dpkg-buildpackage writes its results next to the source tree: a copy.
rm -rf "$work"
mkdir -p "$work/src/winsync"
tar -C "$source" -c --exclude=./build --exclude=./.git . | tar -C "$work/src/winsync" -x
jobs=$(nproc)
(cd "$work/src/winsync" &&
  DEB_BUILD_OPTIONS="nocheck parallel=$jobs" dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log" >&2; fail "dpkg-buildpackage failed (log: $work/build.log)"; }
changes=$(find "$work/src" -maxdepth 1 -name "winsync_${deb_version}_*.changes")
[[ -f $changes ]] || fail "no .changes file"
echo "dpkg-buildpackage: $(grep -c '^ [0-9a-f]\{64\} .*\.deb$' "$changes") packages"

# lintian: every tag of every level is shown; an error or a warning fails.
lintian --pedantic --display-info --show-overrides "$changes" >"$work/lintian.log" 2>&1 || true
sed 's/^/  lintian: /' "$work/lintian.log"
if grep -Eq '^[EW]: ' "$work/lintian.log"; then
  fail "lintian reports errors or warnings"
fi

deb() {
  local f
  f=$(find "$work/src" -maxdepth 1 -name "$1_${deb_version}_*.deb")
  [[ -f $f ]] || fail "no package $1"
  echo "$f"
}
runtime=$(deb libwinsync0)
win32=$(deb libwinsync-win32-0)
dev=$(deb libwinsync-dev)
tools=$(deb winsync-tools)
for pkg in libwinsync0 libwinsync-win32-0 winsync-tools; do
  deb "$pkg-dbgsym" >/dev/null
done

field() { dpkg-deb --field "$1" "$2"; }
contents() { dpkg-deb --fsys-tarfile "$1" | tar -t | sed 's|^\./|/|'; }
has() {
  contents "$1" | grep -Eq "$2" || fail "$(basename "$1") lacks $2"
}
for p in "$runtime" "$win32" "$dev" "$tools"; do
  echo "$(basename "$p"): Depends: $(field "$p" Depends)"
  has "$p" '^/usr/share/doc/[^/]+/copyright$'
  [[ $(field "$p" Description | wc -l) -ge 4 ]] || fail "$(basename "$p") has no long description"
done
[[ $(field "$runtime" Depends) == *libc6* ]] || fail "libwinsync0 does not depend on libc6"
[[ $(field "$dev" Depends) == *"libwinsync0 (= $deb_version)"* &&
   $(field "$dev" Depends) == *"libwinsync-win32-0 (= $deb_version)"* ]] ||
  fail "libwinsync-dev must depend on exactly libwinsync0 and libwinsync-win32-0 $deb_version"
for p in "$runtime" "$win32"; do
  control=$(dpkg-deb --ctrl-tarfile "$p" | tar -t | sed 's|^\./||')
  grep -qx symbols <<<"$control" || fail "$(basename "$p") has no symbols file"
  dpkg-deb --info "$p" triggers | grep -qx 'activate-noawait ldconfig' ||
    fail "$(basename "$p") does not activate the ldconfig trigger"
done
has "$runtime" '/libwinsync\.so\.0$'
has "$win32" '/libwinsync-win32\.so\.0$'
has "$tools" '^/usr/bin/winsync-bench$'
has "$tools" '^/usr/share/man/man1/winsync-bench\.1\.gz$'
has "$tools" '^/usr/bin/winsync-stat$'
has "$tools" '^/usr/share/man/man1/winsync-stat\.1\.gz$'
has "$tools" '^/usr/bin/winsync-verify$'
has "$tools" '^/usr/share/man/man1/winsync-verify\.1\.gz$'
if contents "$runtime" | grep -Eq '\.h$|\.pc$|\.cmake$|\.so$|/man/'; then
  fail "libwinsync0 carries development files"
fi
for pattern in '/include/winsync\.h$' '/include/winsync/win32\.h$' '/libwinsync\.so$' \
  '/libwinsync-win32\.so$' '/winsyncConfig\.cmake$' '/winsyncConfigVersion\.cmake$' \
  '/winsyncTargets\.cmake$' '/pkgconfig/winsync\.pc$' '/pkgconfig/winsync-win32\.pc$' \
  '/man3/ws_wait_any\.3' '/man7/winsync\.7'; do
  has "$dev" "$pattern"
done
# Stripped: the debug information is in the -dbgsym packages.
mkdir -p "$work/unpacked"
for p in "$runtime" "$win32" "$tools"; do
  dpkg-deb -x "$p" "$work/unpacked"
done
for f in "$work"/unpacked/usr/lib/*/libwinsync*.so.0.* "$work"/unpacked/usr/bin/*; do
  if readelf -S "$f" | grep -q '\.debug_info'; then
    fail "$f is not stripped"
  fi
done

# A scratch root whose package database has this system's entries for the
# packages that the libraries depend on, so that dpkg checks the Depends field.
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
: >"$root/var/lib/dpkg/available"
deps=$( { field "$runtime" Depends; echo; field "$win32" Depends; } | tr ',|' '\n' |
  sed 's/(.*)//; s/ //g' | grep -Ev '^$|^libwinsync' | sort -u)
# With foreign architectures (i386) installed, a bare name like libc6 is
# ambiguous: ask for the package's own architecture.
arch=$(field "$runtime" Architecture)
for dep in $deps; do
  case "$dep" in *:*) ;; *) dep="$dep:$arch" ;; esac
  dpkg-query -s "$dep" || fail "$dep, a dependency of the libraries, is not installed here"
  echo
done >"$root/var/lib/dpkg/status"
# The scratch root has no shell to chroot into: the maintainer scripts
# (none but the ldconfig trigger's) run on the host.
dpkg_root() { dpkg --root="$root" --force-script-chrootless --force-not-root "$@"; }

if dpkg_root -i "$dev" >"$work/dpkg-dev-alone.log" 2>&1; then
  fail "libwinsync-dev installed without libwinsync0"
fi
grep -q 'depends on libwinsync0' "$work/dpkg-dev-alone.log" ||
  { cat "$work/dpkg-dev-alone.log" >&2; fail "dpkg refused libwinsync-dev alone, but not for its dependency"; }
dpkg_root --purge libwinsync-dev >/dev/null 2>&1 || true
dpkg_root -i "$runtime" "$win32" "$dev" "$tools" >"$work/dpkg-install.log" 2>&1 ||
  { cat "$work/dpkg-install.log" >&2; fail "dpkg -i failed"; }
status=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Package} ${Version} ${Status}\n' \
  libwinsync0 libwinsync-win32-0 libwinsync-dev winsync-tools)
echo "$status"
[[ $(grep -c ' install ok installed$' <<<"$status") -eq 4 ]] || fail "not all four packages installed"

for via in cmake pkgconfig; do
  "$here/test-consumer.sh" --via "$via" --prefix "$root/usr" --source "$consumer" \
    --work "$work/consumer-$via"
done
for tool in "$root"/usr/bin/*; do
  LD_LIBRARY_PATH=$(dirname "$(find "$root/usr/lib" -name libwinsync.so.0)") \
    "$tool" --help >/dev/null || fail "the installed $(basename "$tool") does not run"
done

dpkg_root --purge winsync-tools libwinsync-dev libwinsync-win32-0 libwinsync0 >"$work/dpkg-purge.log" 2>&1 ||
  { cat "$work/dpkg-purge.log" >&2; fail "dpkg --purge failed"; }
left=$( [[ ! -d $root/usr ]] || find "$root/usr" -type f -o -type l | head)
[[ -z $left ]] || fail "files left after dpkg --purge: $left"
echo "test-deb.sh: four packages built by dpkg-buildpackage, clean for lintian, installed, used and removed"
