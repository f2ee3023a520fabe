#!/usr/bin/env bash
# The Debian packages: cpack -G DEB, their fields and contents, dpkg -i into
# a scratch root (whose package database is a copy of this system's, so
# dependencies are checked against what is installed here), the consumer
# built against them both ways, then dpkg --purge leaves nothing behind.
#   test-deb.sh --build BUILD_DIR --work DIR --consumer DIR
# Environment: CC, WINSYNC_VERSION (as for test-consumer.sh).
set -euo pipefail
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
build="" work="" consumer=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --consumer) consumer=$2; shift 2 ;;
    *) echo "test-deb.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -f $build/CPackConfig.cmake && -n $work && -d $consumer ]] ||
  { echo "usage: test-deb.sh --build BUILD_DIR --work DIR --consumer DIR" >&2; exit 2; }
fail() { echo "test-deb.sh: $*" >&2; exit 1; }
version=${WINSYNC_VERSION:?WINSYNC_VERSION not set}

rm -rf "$work"
mkdir -p "$work"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
runtime=$(find "$work/out" -maxdepth 1 -name "libwinsync0_${version}_*.deb")
dev=$(find "$work/out" -maxdepth 1 -name "libwinsync-dev_${version}_*.deb")
[[ -f $runtime && -f $dev ]] || { ls "$work/out" >&2; fail "expected libwinsync0 and libwinsync-dev $version"; }

field() { dpkg-deb --field "$1" "$2"; }
echo "$(basename "$runtime"): Depends: $(field "$runtime" Depends)"
echo "$(basename "$dev"): Depends: $(field "$dev" Depends)"
[[ $(field "$runtime" Depends) == *libc6* ]] || fail "libwinsync0 does not depend on libc6"
[[ $(field "$dev" Depends) == "libwinsync0 (= $version)" ]] ||
  fail "libwinsync-dev must depend on exactly libwinsync0 (= $version)"
control=$(dpkg-deb --ctrl-tarfile "$runtime" | tar -t | sed 's|^\./||')
grep -qx shlibs <<<"$control" || fail "libwinsync0 has no shlibs file"
dpkg-deb --info "$runtime" triggers | grep -qx 'activate-noawait ldconfig' ||
  fail "libwinsync0 does not activate the ldconfig trigger"
for script in preinst postinst prerm postrm; do
  if grep -qx "$script" <<<"$control" && dpkg-deb --info "$runtime" "$script" | grep -v "^#" | grep -q ldconfig; then
    fail "libwinsync0's $script runs ldconfig (the trigger does)"
  fi
done

# What goes where: the runtime package has the libraries and nothing to build with.
contents() { dpkg-deb --fsys-tarfile "$1" | tar -t | sed 's|^\./|/|'; }
has() {
  local deb=$1 pattern=$2
  contents "$deb" | grep -Eq "$pattern" || fail "$(basename "$deb") lacks $pattern"
}
has "$runtime" '/libwinsync\.so\.0$'
has "$runtime" '/libwinsync-win32\.so\.0$'
if contents "$runtime" | grep -Eq '\.h$|\.pc$|\.cmake$|/libwinsync(-win32)?\.so$|/man/'; then
  fail "libwinsync0 carries development files: $(contents "$runtime" | grep -E '\.h$|\.pc$|\.cmake$|\.so$|/man/' | tr '\n' ' ')"
fi
for pattern in '/include/winsync\.h$' '/include/winsync/win32\.h$' '/libwinsync\.so$' \
  '/libwinsync-win32\.so$' '/winsyncConfig\.cmake$' '/winsyncConfigVersion\.cmake$' \
  '/winsyncTargets\.cmake$' '/pkgconfig/winsync\.pc$' '/pkgconfig/winsync-win32\.pc$' \
  '/man3/ws_wait_any\.3' '/man7/winsync\.7' '/bin/winsync-stat$' '/man1/winsync-stat\.1'; do
  has "$dev" "$pattern"
done

# A scratch root whose package database has this system's entries for the
# packages that libwinsync0 depends on, so that dpkg checks the Depends field.
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
: >"$root/var/lib/dpkg/available"
deps=$(field "$runtime" Depends | tr ',|' '\n' | sed 's/(.*)//; s/ //g' | sort -u)
# With foreign architectures (i386) installed, a bare name like libc6 is
# ambiguous: ask for the package's own architecture.
arch=$(field "$runtime" Architecture)
for dep in $deps; do
  case "$dep" in *:*) ;; *) [ "$arch" = all ] || dep="$dep:$arch" ;; esac
  dpkg-query -s "$dep" || fail "$dep, a dependency of libwinsync0, is not installed here"
  echo
done >"$root/var/lib/dpkg/status"
# The scratch root has no shell to chroot into: the (empty) maintainer
# scripts run on the host.
dpkg_root() { dpkg --root="$root" --force-script-chrootless --force-not-root "$@"; }

if dpkg_root -i "$dev" >"$work/dpkg-dev-alone.log" 2>&1; then
  fail "libwinsync-dev installed without libwinsync0"
fi
grep -q 'depends on libwinsync0' "$work/dpkg-dev-alone.log" ||
  { cat "$work/dpkg-dev-alone.log" >&2; fail "dpkg refused libwinsync-dev alone, but not for its dependency"; }
dpkg_root --purge libwinsync-dev >/dev/null 2>&1 || true
dpkg_root -i "$runtime" "$dev" >"$work/dpkg-install.log" 2>&1 ||
  { cat "$work/dpkg-install.log" >&2; fail "dpkg -i failed"; }
status=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Package} ${Version} ${Status}\n' \
  libwinsync0 libwinsync-dev)
echo "$status"
[[ $(grep -c ' install ok installed$' <<<"$status") -eq 2 ]] || fail "not both packages installed"

for via in cmake pkgconfig; do
  "$here/test-consumer.sh" --via "$via" --prefix "$root/usr" --source "$consumer" \
    --work "$work/consumer-$via"
done

dpkg_root --purge libwinsync-dev libwinsync0 >"$work/dpkg-purge.log" 2>&1 ||
  { cat "$work/dpkg-purge.log" >&2; fail "dpkg --purge failed"; }
left=$( [[ ! -d $root/usr ]] || find "$root/usr" -type f -o -type l | head)
[[ -z $left ]] || fail "files left after dpkg --purge: $left"
echo "test-deb.sh: both packages built, installed, used and removed"
