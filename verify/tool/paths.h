/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef WINSYNC_VERIFY_PATHS_H
#define WINSYNC_VERIFY_PATHS_H

#include <stddef.h>

/* The directory of the installed Windows recorders, found from the tool's own path. */
int vt_exe_dir(char *buf, size_t size);

#endif /* WINSYNC_VERIFY_PATHS_H */
