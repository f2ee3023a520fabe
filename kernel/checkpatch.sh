#!/bin/sh
# Run scripts/checkpatch.pl --strict on every patch of kernel/patches, with
# the checkpatch of the tree that kernel/build.sh unpacked (or of DIR).
#
#   kernel/checkpatch.sh [DIR]
#
# Exit status: 0 when every patch has no error, warning or check.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tree=${1:-$("$here/build.sh" --print-dir)/src}
[ -x "$tree/scripts/checkpatch.pl" ] || {
	echo "checkpatch.sh: no $tree/scripts/checkpatch.pl: run kernel/build.sh first" >&2
	exit 2
}
# spdxcheck.py wants Debian's python3-ply: prefer the system python3.
PATH=/usr/bin:/bin:$PATH
export PATH
bad=0
for p in "$here"/patches/0*-*.patch; do
	case "$p" in */0000-*) continue ;; esac
	res=$(cd "$tree" && scripts/checkpatch.pl --strict "$p" 2>&1)
	total=$(echo "$res" | grep '^total:')
	echo "$(basename "$p"): $total"
	case "$total" in
	"total: 0 errors, 0 warnings, 0 checks,"*) ;;
	*) echo "$res" | grep -A4 '^\(ERROR\|WARNING\|CHECK\)'; bad=1 ;;
	esac
done
exit $bad
