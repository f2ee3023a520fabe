/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workload options, as both the winsync-verify tool and the Windows
 * recorder take them: --seed S --threads N --ops N --objects N --stretch N
 * --max-timeout MS --no-deaths --no-closes --polls-only --no-delays.
 */
#ifndef WINSYNC_VERIFY_ARGS_H
#define WINSYNC_VERIFY_ARGS_H

#include "workload.h"

void va_defaults(struct vw_config *c);
/*
 * If argv[*i] is a workload option, takes it (and its value) and returns 1;
 * 0 if it is not one; -1 (with a message on stderr) if its value is bad.
 */
int va_take(struct vw_config *c, int argc, char **argv, int *i);
/* Writes the options that give `c` again, for the Windows recorder's command line. */
int va_format(const struct vw_config *c, char *buf, size_t size);

#endif /* WINSYNC_VERIFY_ARGS_H */
