#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every script of the tree and every program CTest runs answers --help:
# exit status 0, a usage text on stdout, within 10 s, and nothing done (it
# runs in an empty directory with an empty cache, which must stay empty).
#   docs/check-help.sh SOURCE_DIR BUILD_DIR
# Not asked: scripts/lib.sh (sourced, never run) and image/init (the
# guest's /init); the demo programs (Windows sample programs, run by
# demo/run-demos.sh with fixed arguments).
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
src=$(cd "${1:?usage: check-help.sh SOURCE_DIR BUILD_DIR}" && pwd)
build=$(cd "${2:?usage: check-help.sh SOURCE_DIR BUILD_DIR}" && pwd)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0 checked=0 skipped=0

# An i386 program (ELF class 1) on a kernel that cannot execute it at all
# (no IA32 emulation): not asked here; the QEMU guest runs those programs.
# shellcheck source=../scripts/lib.sh
source "$src/scripts/lib.sh"
i386_runs=1
ws_kernel_runs_i386 || i386_runs=0
cannot_execute_i386() {
	[[ $i386_runs -eq 0 && -f $1 && $(head -c5 "$1" | od -An -tx1 | tr -d ' \n') == 7f454c4601 ]]
}

ask() {
	local what=$1 out rc=0
	if cannot_execute_i386 "$what"; then
		echo "$what --help: not asked: this kernel cannot execute i386 programs"
		skipped=$((skipped + 1))
		return
	fi
	mkdir -p "$scratch/cwd" "$scratch/cache"
	out=$(cd "$scratch/cwd" && WINSYNC_CACHE="$scratch/cache" HOME="$scratch/cwd" \
		timeout 10 "$what" --help 2>"$scratch/err") || rc=$?
	checked=$((checked + 1))
	if [[ $rc -ne 0 ]]; then
		echo "$what --help: exit status $rc: $(head -3 "$scratch/err")"
		failed=1
	elif [[ -z $out ]]; then
		echo "$what --help: printed nothing on stdout"
		failed=1
	elif [[ -n $(find "$scratch/cwd" "$scratch/cache" -mindepth 1) ]]; then
		echo "$what --help: wrote $(find "$scratch/cwd" "$scratch/cache" -mindepth 1 | tr '\n' ' ')"
		failed=1
	fi
	rm -rf "$scratch/cwd" "$scratch/cache"
}

while IFS= read -r script; do
	case "$script" in */scripts/lib.sh | */image/init) continue ;; esac
	ask "$script"
done < <(find "$src" -path "$src/build" -prune -o -path "$src/.git" -prune -o \
	-type f \( -name '*.sh' -o -path "$src/.ci/run" \) -print | sort)

# The ELF programs among the commands of CTest's tests, once each.
programs=$(cd "$build" && ctest -N -V | sed -n 's/^.* Test command: \([^ ]*\).*$/\1/p' | sort -u)
for program in $programs; do
	[[ -x $program && $(head -c4 "$program" | od -An -c | tr -d ' ') == 177ELF ]] || continue
	ask "$program"
done
# The tools, whether or not a test runs them (not the Windows programs:
# winsync-verify's recorders run under Wine, with the arguments it gives).
while IFS= read -r tool; do
	ask "$tool"
done < <(find "$build" -path "$build/package" -prune -o -type f -name 'winsync-*' ! -name '*.exe' \
	-perm -u+x -print | sort)
[[ $checked -gt 20 ]] || { echo "check-help.sh: only $checked programs found"; exit 1; }
[[ $failed -eq 0 ]] || exit 1
echo "check-help.sh: $checked scripts and programs answer --help ($skipped i386 programs not asked)"
