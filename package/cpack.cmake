# Debian packages of the install components (cmake/install.cmake):
#   libwinsync0     runtime: the shared libraries
#   libwinsync-dev  development: headers, .so links, CMake package, .pc
#                   files, man pages; depends on libwinsync0 of its version
#   cpack -G DEB (in the build tree), or cpack --config BUILD/CPackConfig.cmake
# The libraries go to ${CMAKE_INSTALL_LIBDIR} under /usr: configure with
# -DCMAKE_INSTALL_PREFIX=/usr (the `package` preset) for Debian's multiarch
# directory.
if(CMAKE_SYSTEM_NAME STREQUAL "Windows")
  return()
endif()

set(CPACK_PACKAGE_NAME winsync)
set(CPACK_PACKAGE_VENDOR winsync)
set(CPACK_PACKAGE_CONTACT "winsync maintainers <maintainers@winsync.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Windows NT synchronization objects for Linux")
set(CPACK_PACKAGE_DESCRIPTION "Events, mutexes, semaphores and WaitForMultipleObjects-style \
waits with exact NT semantics, in a shared-memory arena on Linux futexes \
(futex_waitv), for Wine and Proton.")
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL runtime development)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libwinsync0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# Depends: from dpkg-shlibdeps (libc6).  The control files of package/deb/:
# shlibs, and the ldconfig trigger instead of CPack's maintainer scripts
# that run ldconfig themselves (under dpkg --root, on the host).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA)
# Programs built on 0.N need 0.N: the soname stays 0 until 1.0, and a new
# minor version may change the ABI (as the CMake version file says).
math(EXPR next_minor "${PROJECT_VERSION_MINOR} + 1")
set(WINSYNC_ABI_END ${PROJECT_VERSION_MAJOR}.${next_minor})
foreach(file shlibs triggers postinst postrm)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/${file}.in
    ${CMAKE_BINARY_DIR}/package/deb/${file} @ONLY)
  list(APPEND CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/package/deb/${file})
endforeach()
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libwinsync-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS runtime)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SUGGESTS "pkg-config, cmake")

include(CPack)
