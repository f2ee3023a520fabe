/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where the installed Windows recorders are: beside the tool, in LIBEXECDIR/winsync-verify. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"

#ifndef WINSYNC_VERIFY_LIBEXEC_REL
#define WINSYNC_VERIFY_LIBEXEC_REL "../libexec/winsync-verify"
#endif

int vt_exe_dir(char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return snprintf(buf, size, "%s/%s", self, WINSYNC_VERIFY_LIBEXEC_REL) < (int)size ? 0 : -1;
}
