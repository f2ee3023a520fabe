# SPDX-License-Identifier: LGPL-2.1-or-later
# The demo programs, shared by the native build (demo/CMakeLists.txt) and the
# Windows one (demo/windows/CMakeLists.txt).
set(WINSYNC_DEMO_PROGRAMS prodcons workers philosophers abandon pulse semantics bench)
