/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A Wine prefix's arena.  Wine 8 keeps a prefix's server directory in
 * /tmp/.wine-UID/server-DEV-INO, DEV and INO being the prefix directory's
 * in hexadecimal (dlls/ntdll/unix/server.c); with WINEWINSYNC=1 the
 * wineserver creates the arena "wine-DEV-INO" named after the server
 * directory's own device and inode (wine/patches/0001).
 */
#include "stat.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* As Wine prints them: a value wider than 32 bits as its high half, then 8 digits. */
static int hex(char *buf, size_t size, unsigned long long v)
{
	if (v >> 32)
		return snprintf(buf, size, "%llx%08llx", v >> 32, v & 0xffffffffull);
	return snprintf(buf, size, "%llx", v);
}

int stat_wine_arena(const char *dir, char *name, size_t size, char *why, size_t why_size)
{
	char server[256], dev[24], ino[24];
	struct stat st;

	if (stat(dir, &st) < 0) {
		snprintf(why, why_size, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	hex(dev, sizeof(dev), (unsigned long long)st.st_dev);
	hex(ino, sizeof(ino), (unsigned long long)st.st_ino);
	snprintf(server, sizeof(server), "/tmp/.wine-%u/server-%s-%s", (unsigned)getuid(), dev, ino);
	if (stat(server, &st) < 0) {
		snprintf(why, why_size, "%s: %s (is a wineserver running for the prefix?)", server,
			 strerror(errno));
		return -errno;
	}
	snprintf(name, size, "wine-%llx-%llx", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	return 0;
}
