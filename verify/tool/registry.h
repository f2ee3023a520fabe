/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The backends winsync-verify knows: in process, or a Windows recorder run under Wine. */
#ifndef WINSYNC_VERIFY_REGISTRY_H
#define WINSYNC_VERIFY_REGISTRY_H

#include "recorder.h"

struct vt_backend {
	const char *name;
	const struct vr_backend *inproc;  /* NULL: the Windows recorder */
	const char *exe;                  /* the Windows recorder's file name */
	const char *wine_env;             /* the variable that may hold its Wine command */
	const char *wine_default;         /* the Wine command when neither --wine nor that is set */
	const char *about;
};

extern const struct vt_backend vt_backends[];
extern const unsigned vt_nbackends;

const struct vt_backend *vt_find_backend(const char *name);

#endif /* WINSYNC_VERIFY_REGISTRY_H */
