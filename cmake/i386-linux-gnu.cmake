# SPDX-License-Identifier: LGPL-2.1-or-later
# 32-bit x86 Linux programs on an x86_64 Debian host, with gcc -m32
# (gcc-multilib) and the :i386 packages of scripts/deps.sh's `i386` group:
# libwinsync and its test suite as 32-bit programs (the native32 preset).
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/i386-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(CMAKE_LIBRARY_ARCHITECTURE i386-linux-gnu)

set(CMAKE_C_FLAGS_INIT "-m32")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-m32")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-m32")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-m32")

# The host runs the programs, through cmake/i386-run.sh: it skips them (exit
# 77) where the kernel cannot execute i386 programs at all.
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/i386-run.sh)
# pkg-config (Check) from the i386 tree only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig")
