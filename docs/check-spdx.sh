#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every source, script, build and man page file of the tree names its licence
# in an SPDX-License-Identifier line among its first three lines.
#   docs/check-spdx.sh SOURCE_DIR
# Not asked: markdown and JSON (no comment syntax of their own), data files
# (expected outputs), LICENSE, debian/ (debian/copyright covers it), the
# patch series (each patch is in its target's licence), and the files whose
# whole text is a cache key (kernel/build.sh, the kernel config fragments
# kernel/*.config, wine/build.sh: a new line would rebuild every cached
# kernel and Wine).
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
src=$(cd "${1:?usage: check-spdx.sh SOURCE_DIR}" && pwd)
missing=0 checked=0
while IFS= read -r f; do
	rel=${f#"$src"/}
	case "$rel" in
	kernel/build.sh | kernel/*.config | wine/build.sh) continue ;;
	esac
	checked=$((checked + 1))
	if ! head -3 "$f" | grep -q 'SPDX-License-Identifier: '; then
		echo "no SPDX-License-Identifier line: $rel"
		missing=1
	fi
done < <(find "$src" \( -path "$src/build" -o -path "$src/.git" -o -path "$src/debian" \
	-o -path "$src/kernel/patches" -o -path "$src/wine/patches" \) -prune -o -type f \
	\( -name '*.[ch]' -o -name '*.sh' -o -name 'CMakeLists.txt' -o -name '*.cmake' \
	-o -name '*.in' -o -name '*.map' -o -name '*.config' -o -name '*.[137]' \
	-o -path "$src/.ci/run" -o -path "$src/image/init" \) -print | sort)
[[ $missing -eq 0 ]] || exit 1
echo "check-spdx.sh: $checked files name their licence"
