# SPDX-License-Identifier: LGPL-2.1-or-later
# Cross-compiling for 32-bit Windows with Debian's mingw-w64
# (gcc-mingw-w64-i686): winsync.dll and the Windows demo programs, which
# run under Wine.  cmake -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-i686.cmake
set(CMAKE_SYSTEM_PROCESSOR i686)
set(WINSYNC_MINGW_TRIPLET i686-w64-mingw32)
include(${CMAKE_CURRENT_LIST_DIR}/mingw-w64.cmake)
