#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build futex_fuzz (futex_fuzz.c beside this script) as a 64-bit and a
# 32-bit program:
#
#   kernel/fuzz/build.sh OUTDIR     OUTDIR/futex_fuzz64, OUTDIR/futex_fuzz32
#
# A user-space program, built apart from the kernels of kernel/build.sh so
# that a change of the fuzzer does not change their cache keys. Each
# program is written under a temporary name and renamed: a guest that runs
# the previous one meanwhile keeps it. Needs gcc with -m32 (scripts/deps.sh
# kernel).
set -euo pipefail
# --help: the comment above, and nothing done.
case "${1:-}" in -h | --help | "") sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; [ -n "${1:-}" ]; exit ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1
mkdir -p "$out"
for bits in 64 32; do
	gcc -m"$bits" -O2 -g -Wall -Wextra -Werror -pthread -o "$out/futex_fuzz$bits.new" \
		"$here/futex_fuzz.c"
	mv "$out/futex_fuzz$bits.new" "$out/futex_fuzz$bits"
done
