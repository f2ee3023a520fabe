# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/test.sh runs CTest with a job per CPU.  Wine's tests share a
# wineserver and its prefixes, and the guest's boot a QEMU that wants both
# CPUs under TCG, so every test labelled wine or guest runs alone
# (RUN_SERIAL).  CMake 3.25 sets a test's properties only in the directory
# that added it: each directory with such tests calls this at its end.  (The
# native tests that time something say so themselves: tests/CMakeLists.txt.)
function(winsync_serialize_wine_and_guest_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    get_test_property(${test} LABELS labels)
    if("wine" IN_LIST labels OR "guest" IN_LIST labels)
      set_tests_properties(${test} PROPERTIES RUN_SERIAL ON)
    endif()
  endforeach()
endfunction()
