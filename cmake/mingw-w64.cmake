# SPDX-License-Identifier: LGPL-2.1-or-later
# What both mingw-w64 toolchain files share (mingw-w64-x86_64.cmake,
# mingw-w64-i686.cmake): they set CMAKE_SYSTEM_PROCESSOR and
# WINSYNC_MINGW_TRIPLET, then include this.
set(CMAKE_SYSTEM_NAME Windows)

find_program(CMAKE_C_COMPILER NAMES ${WINSYNC_MINGW_TRIPLET}-gcc REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${WINSYNC_MINGW_TRIPLET}-windres)

set(CMAKE_FIND_ROOT_PATH /usr/${WINSYNC_MINGW_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# No libgcc DLL to ship next to the programs.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc")
