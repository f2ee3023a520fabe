#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run scripts/checkpatch.pl --strict on every patch of kernel/patches, with
# the checkpatch of the tree that kernel/build.sh unpacked (or of DIR).
#
#   kernel/checkpatch.sh [DIR]
#
# Exit status: 0 when no patch has an error, warning or check, with two
# exceptions, each accepted on its own terms and named in the output:
# - checkpatch warns "added, moved or deleted file(s), does MAINTAINERS need
#   updating?" (FILE_PATH_CHANGES) for any patch that adds a file without
#   touching MAINTAINERS, whether or not an entry covers it. That warning is
#   accepted when get_maintainer.pl finds every added or deleted file of the
#   patch in a MAINTAINERS entry other than THE REST (DIR must be the patched
#   tree, which has the files).
# - the tree is Debian's source, without mainline's history, so checkpatch
#   cannot find the upstream commits that the backports name and warns
#   UNKNOWN_COMMIT_ID. That warning is accepted for the ids that the cover
#   letter's map lists (looked up in public records of the mainline and tip
#   trees, with their subjects), and for no other.
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

cover=$here/patches/0000-cover-letter.patch
bad=0
for p in "$here"/patches/0*-*.patch; do
	case "$p" in */0000-*) continue ;; esac
	res=$(cd "$tree" && scripts/checkpatch.pl --strict --show-types "$p" 2>&1)
	total=$(echo "$res" | grep '^total:')
	echo "$(basename "$p"): $total"
	accepted=0 other=0
	while IFS= read -r line; do
		case "$line" in
		WARNING:FILE_PATH_CHANGES:*)
			entries=$(covering_entries "$p")
			if [ -n "$entries" ]; then
				echo "    accepted FILE_PATH_CHANGES: the new files are in MAINTAINERS: $entries"
				accepted=$((accepted + 1))
				continue
			fi
			;;
		WARNING:UNKNOWN_COMMIT_ID:*)
			id=$(echo "$line" | sed -n "s/.*Unknown commit id '\([0-9a-f]*\)'.*/\1/p")
			if [ -n "$id" ] && grep -q "${id:0:12}" "$cover"; then
				echo "    accepted UNKNOWN_COMMIT_ID: upstream commit ${id:0:12} is in the cover letter's map"
				accepted=$((accepted + 1))
				continue
			fi
			;;
		esac
		other=$((other + 1))
		echo "$res" | grep -A4 -F "$line"
	done < <(echo "$res" | grep -E '^(ERROR|WARNING|CHECK):')
	case "$total" in
	"total: 0 errors, "*) ;;
	*) other=$((other + 1)) ;;
	esac
	[ "$other" = 0 ] || bad=1
done
exit $bad
