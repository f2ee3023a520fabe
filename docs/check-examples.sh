#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every C example of the documentation compiles, and every whole program
# among them runs: the ```c blocks of every markdown file of the tree and
# the EXAMPLE(S) sections of every man page. Each is compiled twice, with
# -std=c11 and -std=gnu11, both with -Wall -Wextra -Werror, against the
# tree's headers and the build's libwinsync; a block with main() is linked
# and run (exit status 0 within 20 s), any other block must compile on its
# own (-c). A markdown block with neither an #include nor main() is a
# listing of declarations (kernel/README.md's ABI), reported and not
# compiled; a man page's example always compiles. Section 1 pages show
# shell commands: not C.
#   docs/check-examples.sh SOURCE_DIR LIBRARY_DIR WORK_DIR
# Environment: CC (default cc).
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
usage="usage: check-examples.sh SOURCE_DIR LIBRARY_DIR WORK_DIR"
src=$(cd "${1:?$usage}" && pwd)
libdir=$(cd "${2:?$usage}" && pwd)
work=${3:?$usage}
cc=${CC:-cc}
rm -rf "$work"
mkdir -p "$work/blocks"

# Markdown: the lines between "```c" and "```"; file names carry the origin.
while IFS= read -r md; do
	rel=${md#"$src"/}
	awk -v out="$work/blocks" -v rel="$rel" '
		/^```c[ \t]*$/ { inside = 1; n++; start = NR + 1
			name = rel; gsub(/[\/.]/, "_", name)
			file = out "/" name "-" start ".c"; printf "" > file; next }
		inside && /^```/ { inside = 0; close(file); next }
		inside { print > file }' "$md"
done < <(find "$src" -path "$src/build" -prune -o -path "$src/.git" -prune -o \
	-path "$src/debian/build" -prune -o -name '*.md' -type f -print | sort)

# Man pages: .nf/.fi (or .EX/.EE) blocks under .SH EXAMPLE or EXAMPLES,
# with roff's escapes turned back into C.
while IFS= read -r page; do
	rel=${page#"$src"/}
	awk -v out="$work/blocks" -v rel="$rel" '
		/^\.SH / { example = ($0 ~ /^\.SH "?EXAMPLES?"?$/) }
		example && /^\.(nf|EX)$/ { inside = 1; start = NR + 1
			name = rel; gsub(/[\/.]/, "_", name)
			file = out "/" name "-" start ".c"; printf "" > file; next }
		inside && /^\.(fi|EE)$/ { inside = 0; close(file); next }
		inside {
			line = $0
			gsub(/\\e/, "\001", line)
			gsub(/\\-/, "-", line); gsub(/\\\(dq/, "\"", line)
			gsub(/\\\(aq/, "'"'"'", line); gsub(/\\&/, "", line)
			gsub(/\001/, "\\", line)
			print line > file
		}' "$page"
done < <(find "$src/man" -type f -name '*.[2-9]' | sort)

compiled=0 ran=0 listings=0 failed=0
for block in "$work"/blocks/*.c; do
	[[ -e $block ]] || continue
	origin=$(basename "$block" .c)
	if [[ $origin != man_* ]] && ! grep -q '^[[:space:]]*#[[:space:]]*include' "$block" &&
		! grep -q '\bmain *(' "$block"; then
		echo "listing, not compiled: $origin"
		listings=$((listings + 1))
		continue
	fi
	whole=0
	grep -q '\bmain *(' "$block" && whole=1
	for std in c11 gnu11; do
		exe="${block%.c}-$std"
		flags=(-std="$std" -Wall -Wextra -Werror -I"$src/include")
		if [[ $whole == 1 ]]; then
			out=$("$cc" "${flags[@]}" "$block" -o "$exe" -L"$libdir" -lwinsync \
				-Wl,-rpath,"$libdir" 2>&1) || { echo "FAILED to compile ($std): $origin"; echo "$out"; failed=1; continue; }
		else
			out=$("$cc" "${flags[@]}" -c "$block" -o "$exe.o" 2>&1) ||
				{ echo "FAILED to compile ($std): $origin"; echo "$out"; failed=1; continue; }
		fi
		compiled=$((compiled + 1))
	done
	if [[ $whole == 1 && -x "${block%.c}-c11" ]]; then
		status=0
		out=$(cd "$work" && timeout 20 "${block%.c}-c11" 2>&1) || status=$?
		if [[ $status -ne 0 ]]; then
			echo "FAILED to run (exit status $status): $origin"
			echo "$out"
			failed=1
		else
			echo "compiled and ran: $origin: $(head -1 <<<"$out")"
			ran=$((ran + 1))
		fi
	elif [[ $whole == 0 ]]; then
		echo "compiled: $origin"
	fi
done
echo "check-examples.sh: $compiled compilations, $ran programs ran, $listings listings"
[[ $compiled -gt 0 ]] || { echo "no examples found"; exit 1; }
exit "$failed"
