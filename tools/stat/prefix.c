/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A Wine prefix's arena.  With WINEWINSYNC=1 the wineserver creates the
 * arena "wine-DEV-INO", named after its server directory's own device and
 * inode (wine/patches/0001).  The server directory is server-DEV-INO, DEV
 * and INO being the prefix directory's in hexadecimal, under a root that
 * Wine 8 chooses (dlls/ntdll/unix/server.c, init_server_dir):
 *   Debian's Wine    /run/user/UID/wine if /run/user/UID exists, else
 *                    $TMPDIR (or /tmp) / the name kept in PREFIX/wineserver
 *   upstream Wine    /tmp/.wine-UID
 * The first of these that exists is the one.
 */
#include "stat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* As Wine prints them: a value wider than 32 bits as its high half, then 8 digits. */
static void hex(char *buf, size_t size, unsigned long long v)
{
	if (v >> 32)
		snprintf(buf, size, "%llx%08llx", v >> 32, v & 0xffffffffull);
	else
		snprintf(buf, size, "%llx", v);
}

/* Debian's root under TMPDIR: its name is the first line of PREFIX/wineserver. */
static bool debian_tmp_root(const char *dir, char *root, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/wineserver", dir);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return false;
	}
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	if (!line[0] || strchr(line, '/'))
		return false;
	snprintf(root, size, "%s/%s", tmp && tmp[0] ? tmp : "/tmp", line);
	return true;
}

int stat_wine_arena(const char *dir, char *name, size_t size, char *why, size_t why_size)
{
	char roots[3][4096], server[4200], dev[24], ino[24];
	int n = 0, tried = 0;
	struct stat st;

	if (stat(dir, &st) < 0) {
		snprintf(why, why_size, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	hex(dev, sizeof(dev), (unsigned long long)st.st_dev);
	hex(ino, sizeof(ino), (unsigned long long)st.st_ino);
	snprintf(roots[n], sizeof(roots[n]), "/run/user/%u", (unsigned)getuid());
	if (stat(roots[n], &st) == 0)
		snprintf(roots[n++], sizeof(roots[0]), "/run/user/%u/wine", (unsigned)getuid());
	if (debian_tmp_root(dir, roots[n], sizeof(roots[n])))
		n++;
	snprintf(roots[n++], sizeof(roots[0]), "/tmp/.wine-%u", (unsigned)getuid());
	for (int i = 0; i < n; i++, tried++) {
		snprintf(server, sizeof(server), "%s/server-%s-%s", roots[i], dev, ino);
		if (stat(server, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(name, size, "wine-%llx-%llx", (unsigned long long)st.st_dev,
				 (unsigned long long)st.st_ino);
			return 0;
		}
	}
	snprintf(why, why_size,
		 "no server directory server-%s-%s for %s in %d places (/run/user/UID/wine, "
		 "TMPDIR/<PREFIX/wineserver>, /tmp/.wine-UID): is a wineserver running for it?",
		 dev, ino, dir, tried);
	return -ENOENT;
}
