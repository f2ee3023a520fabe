# SPDX-License-Identifier: LGPL-2.1-or-later
# cmake -DBUILD=DIR -DPREFIX=DIR -P install-fresh.cmake
# Installs the build tree into an empty PREFIX, so that nothing from an
# earlier run can stand in for a file the install forgot.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
