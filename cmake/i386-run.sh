#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs one test program of a 32-bit build (CTest's launcher, set as the
# CROSSCOMPILING_EMULATOR of cmake/i386-linux-gnu.cmake), or skips it (exit
# 77, a CTest skip) when this kernel cannot execute i386 programs at all (an
# x86_64 kernel without IA32 emulation, as some CI and cloud VMs have): the
# QEMU guest's kernel has it, and its guest-native-* tests run the suite.
#   cmake/i386-run.sh PROGRAM [ARG...]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{/SPDX/d;s/^# \{0,1\}//p}}' "$0"; exit 0 ;; esac
# shellcheck source=../scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
if ! ws_kernel_runs_i386; then
	echo "skipped: this kernel cannot execute i386 programs (no IA32 emulation); the QEMU guest runs them" >&2
	exit 77
fi
exec "$@"
