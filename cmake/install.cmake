# SPDX-License-Identifier: LGPL-2.1-or-later
# What `cmake --install` puts in the prefix, by component:
#   runtime      libwinsync.so.0, libwinsync-win32.so.0 (Windows: winsync.dll)
#   development  the headers, the .so links (Windows: libwinsync.dll.a), the
#                CMake package (find_package(winsync): winsync::winsync,
#                winsync::win32), winsync.pc, winsync-win32.pc and the man
#                pages (man/CMakeLists.txt)
#   tools        winsync-bench (tests/bench), winsync-stat (tools/stat),
#                winsync-verify (verify/)
# The Debian packages (debian/*.install) split the same files by path.
include(CMakePackageConfigHelpers)

set(WINSYNC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/winsync)

install(TARGETS winsync winsync-win32 EXPORT winsyncTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
    NAMELINK_COMPONENT development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
install(FILES include/winsync.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
install(FILES include/winsync/win32.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/winsync COMPONENT development)

install(EXPORT winsyncTargets NAMESPACE winsync::
  DESTINATION ${WINSYNC_CMAKE_DIR} COMPONENT development)
configure_package_config_file(cmake/winsyncConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/winsyncConfig.cmake
  INSTALL_DESTINATION ${WINSYNC_CMAKE_DIR})
# 0.x: a new minor version may change the ABI (the soname is 0 until 1.0).
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/winsyncConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/winsyncConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/winsyncConfigVersion.cmake
  DESTINATION ${WINSYNC_CMAKE_DIR} COMPONENT development)

# The .pc files find the prefix from their own place (${pcfiledir}), so the
# installed tree can move: cmake --install --prefix, a package, a DESTDIR.
file(RELATIVE_PATH WINSYNC_PC_TO_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" WINSYNC_PC_TO_PREFIX "${WINSYNC_PC_TO_PREFIX}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "the .pc files need CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR relative to the prefix")
endif()
if(CMAKE_SYSTEM_NAME STREQUAL "Windows")
  set(WINSYNC_PC_WIN32_LIBS "")
  set(WINSYNC_PC_WIN32_CFLAGS "-DWINSYNC_WIN32_REPLACE")
else()
  set(WINSYNC_PC_WIN32_LIBS "-lwinsync-win32")
  set(WINSYNC_PC_WIN32_CFLAGS "")
endif()
foreach(pc winsync winsync-win32)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
endforeach()
