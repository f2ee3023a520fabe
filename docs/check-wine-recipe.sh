#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's recipe for a Wine developer's own tree, step by step, on a
# pristine tree of Debian's wine source package (as `apt-get source wine`
# unpacks it; the .dsc that wine/build.sh downloaded into the cache):
#   git checkout of the tree; cp include/winsync.h; git am the series;
#   Debian's two generated-file stubs; tools/make_requests.
# Then checks what those steps are for: the header the patches include is
# there and is ours, every request the series adds to server/protocol.def
# is in the regenerated protocol header and the server's request tables,
# and the tree differs from the series only by the header and generated
# files. Building the tree is wine/build.sh's part (CTest's wine-build),
# which runs the same steps plus Debian's other generators.
#   docs/check-wine-recipe.sh SOURCE_DIR WORK_DIR
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
src=$(cd "${1:?usage: check-wine-recipe.sh SOURCE_DIR WORK_DIR}" && pwd)
work=${2:?usage: check-wine-recipe.sh SOURCE_DIR WORK_DIR}
# shellcheck source=../scripts/lib.sh
source "$src/scripts/lib.sh"
fail() { echo "check-wine-recipe.sh: $*" >&2; exit 1; }
step() { echo "+ $*"; }

ver=$(dpkg-query -W -f='${Version}' wine64)
dsc=$(ws_cache_dir)/wine/download/$ver/wine_${ver#*:}.dsc
[[ -f $dsc ]] || fail "no $dsc: wine/build.sh downloads it (CTest's wine-build)"
rm -rf "$work"
mkdir -p "$work"
tree=$work/wine
step "dpkg-source -x $(basename "$dsc")   (apt-get source wine)"
dpkg-source -q -x "$dsc" "$tree" >"$work/dpkg-source.log" 2>&1 ||
	{ tail "$work/dpkg-source.log" >&2; fail "dpkg-source -x failed"; }
step "git init; git add; git commit   (the tree as a git checkout)"
ws_git_baseline "$tree" "wine $ver (pristine)" || fail "git commit of the tree failed"

cd "$tree"
mapfile -t patches < <(ls "$src"/wine/patches/*.patch | grep -v /0000-)
step "cp winsync/include/winsync.h include/"
cp "$src/include/winsync.h" include/
step "git am ${#patches[@]} patches"
ws_git_am . "${patches[@]}" || fail "the series does not apply to wine $ver"
step "./debian/scripts/generate server/{trace,request}.generated make_requests   (Debian's tree only)"
./debian/scripts/generate server/trace.generated make_requests
./debian/scripts/generate server/request.generated make_requests
step "tools/make_requests"
./tools/make_requests >"$work/make_requests.log" 2>&1 ||
	{ cat "$work/make_requests.log" >&2; fail "tools/make_requests failed"; }

# What the steps are for.
while IFS= read -r file; do
	[[ -f include/winsync.h ]] || fail "$file includes winsync.h, which is not in include/"
done < <(grep -rl '#include "winsync.h"' server dlls/ntdll)
cmp -s include/winsync.h "$src/include/winsync.h" || fail "include/winsync.h is not the library's"
added=$(git diff "HEAD~${#patches[@]}" HEAD -- server/protocol.def | sed -n 's/^+@REQ(\(.*\))$/\1/p')
[[ -n $added ]] || fail "the series adds no server request: nothing checked"
for req in $added; do
	grep -q "struct ${req}_request" include/wine/server_protocol.h ||
		fail "request $req is not in include/wine/server_protocol.h: make_requests did not run"
	grep -q "req_${req}" server/request.generated ||
		fail "request $req is not in the server's request table"
done
others=$(git status --porcelain | awk '{ print $2 }' |
	grep -Ev '^(include/winsync\.h|include/wine/server_protocol\.h|server/(trace|request)\.generated)$' || true)
[[ -z $others ]] || fail "the steps changed more than the header and generated files: $others"
echo "check-wine-recipe.sh: the recipe applies to wine $ver: ${#patches[@]} patches, requests $(echo $added)"
