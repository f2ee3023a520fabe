#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run scripts/checkpatch.pl --strict on every patch of kernel/patches, with
# the checkpatch of the tree that kernel/build.sh unpacked (or of DIR).
#
#   kernel/checkpatch.sh [DIR]
#
# Exit status: 0 when every patch has no error, warning or check, with one
# exception: checkpatch warns "added, moved or deleted file(s), does
# MAINTAINERS need updating?" (FILE_PATH_CHANGES) for any patch that adds a
# file without touching MAINTAINERS, whether or not an entry covers it. That
# warning is accepted when get_maintainer.pl finds every added or deleted
# file of the patch in a MAINTAINERS entry other than THE REST (DIR must be
# the patched tree, which has the files); the line then names the entries.
set -u
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
tree=${1:-$("$here/build.sh" --print-dir)/src}
[ -x "$tree/scripts/checkpatch.pl" ] || {
	echo "checkpatch.sh: no $tree/scripts/checkpatch.pl: run kernel/build.sh first" >&2
	exit 2
}
# spdxcheck.py wants Debian's python3-ply: prefer the system python3.
PATH=/usr/bin:/bin:$PATH
export PATH

# The MAINTAINERS entries (other than THE REST) of the files a patch adds
# or deletes; empty if one of them has none.
covering_entries() {
	files=$(sed -n 's/^ \(create\|delete\) mode [0-7]* //p' "$1")
	[ -n "$files" ] || return 0
	all=""
	for f in $files; do
		e=$(cd "$tree" && scripts/get_maintainer.pl --no-git --no-git-fallback --no-email \
			--no-l --no-r --no-m --subsystem --no-rolestats -f "$f" 2>/dev/null |
			grep -v '^THE REST$' | paste -sd, -)
		[ -n "$e" ] || return 0
		all="$all$e,"
	done
	echo "$all" | tr ',' '\n' | sed '/^$/d' | sort -u | paste -sd, -
}

bad=0
for p in "$here"/patches/0*-*.patch; do
	case "$p" in */0000-*) continue ;; esac
	res=$(cd "$tree" && scripts/checkpatch.pl --strict --show-types "$p" 2>&1)
	total=$(echo "$res" | grep '^total:')
	case "$total" in
	"total: 0 errors, 0 warnings, 0 checks,"*)
		echo "$(basename "$p"): $total"
		;;
	"total: 0 errors, 1 warnings, 0 checks,"*)
		entries=""
		if echo "$res" | grep -q '^WARNING:FILE_PATH_CHANGES:'; then
			entries=$(covering_entries "$p")
		fi
		if [ -n "$entries" ]; then
			echo "$(basename "$p"): $total"
			echo "    (FILE_PATH_CHANGES: the new files are in MAINTAINERS: $entries)"
		else
			echo "$(basename "$p"): $total"
			echo "$res" | grep -A4 '^\(ERROR\|WARNING\|CHECK\)'
			bad=1
		fi
		;;
	*)
		echo "$(basename "$p"): $total"
		echo "$res" | grep -A4 '^\(ERROR\|WARNING\|CHECK\)'
		bad=1
		;;
	esac
done
exit $bad
