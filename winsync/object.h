/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Creating and closing objects (the per-type calls are sem.c, mutex.c, event.c). */
#ifndef WINSYNC_OBJECT_H
#define WINSYNC_OBJECT_H

#include <errno.h>

#include "arena.h"

/* Allocates and fills an object; the handle is valid once the call returns. */
int ws_object_create(ws_arena *arena, enum ws_type type, uint32_t value, uint32_t aux,
		     ws_handle *handle);

#endif
