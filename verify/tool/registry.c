/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backend table.  The test build of the tool (WINSYNC_VERIFY_TEST_BACKENDS)
 * adds the toy backends, correct and faulty; the installed tool has only
 * the real ones.
 */
#include <string.h>

#include "backends.h"
#include "registry.h"

const struct vt_backend vt_backends[] = {
	{ "core", &vr_backend_core, NULL, NULL, NULL, "libwinsync (include/winsync.h), in process" },
	{ "win32", &vr_backend_win32, NULL, NULL, NULL,
	  "libwinsync-win32 (include/winsync/win32.h), in process" },
	{ "wine-server", NULL, "winsync-verify-record-kernel32.exe", "WINSYNC_VERIFY_WINE", "wine",
	  "kernel32 under Wine: Wine's own objects in the wineserver" },
	{ "wine-winsync", NULL, "winsync-verify-record-kernel32.exe", "WINSYNC_VERIFY_WINE_WINSYNC", NULL,
	  "kernel32 under Wine with the winsync backend (wine/, WINEWINSYNC=1)" },
	{ "winsync-dll", NULL, "winsync-verify-record-winsync.exe", "WINSYNC_VERIFY_WINE", "wine",
	  "winsync.dll under Wine (WINSYNC_WIN32_REPLACE)" },
#ifdef WINSYNC_VERIFY_TEST_BACKENDS
	{ "toy", &vr_backend_toy, NULL, NULL, NULL, "test: a reference implementation on one pthread mutex" },
	{ "toy-waitall-one-by-one", &vr_backend_toy_waitall_one_by_one, NULL, NULL, NULL,
	  "test, faulty: wait-all takes its objects one by one, with rollback" },
	{ "toy-pulse-set-reset", &vr_backend_toy_pulse_set_reset, NULL, NULL, NULL,
	  "test, faulty: PulseEvent is SetEvent then ResetEvent" },
	{ "toy-auto-wakes-all", &vr_backend_toy_auto_wakes_all, NULL, NULL, NULL,
	  "test, faulty: an auto-reset set wakes every blocked waiter" },
	{ "toy-mutex-no-recursion", &vr_backend_toy_mutex_no_recursion, NULL, NULL, NULL,
	  "test, faulty: a mutex forgets recursive acquisitions" },
#endif
};

const unsigned vt_nbackends = sizeof(vt_backends) / sizeof(vt_backends[0]);

const struct vt_backend *vt_find_backend(const char *name)
{
	for (unsigned i = 0; i < vt_nbackends; i++)
		if (!strcmp(vt_backends[i].name, name))
			return &vt_backends[i];
	return NULL;
}
