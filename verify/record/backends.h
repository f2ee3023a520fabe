/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The recorder's in-process backends. */
#ifndef WINSYNC_VERIFY_BACKENDS_H
#define WINSYNC_VERIFY_BACKENDS_H

#include "recorder.h"

/* The native core: libwinsync, include/winsync.h. */
extern const struct vr_backend vr_backend_core;
/* The Win32 layer: libwinsync-win32 natively, or kernel32 / winsync.dll in the Windows recorder. */
extern const struct vr_backend vr_backend_win32;

/*
 * Test-only backends (not in the installed tool): a small reference
 * implementation of the model on one pthread mutex, correct, and with one
 * fault each that real backends have had.
 */
extern const struct vr_backend vr_backend_toy;
extern const struct vr_backend vr_backend_toy_waitall_one_by_one;
extern const struct vr_backend vr_backend_toy_pulse_set_reset;
extern const struct vr_backend vr_backend_toy_auto_wakes_all;
extern const struct vr_backend vr_backend_toy_mutex_no_recursion;

#endif /* WINSYNC_VERIFY_BACKENDS_H */
