/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A failure (check.h) for people: a text timeline (threads as columns,
 * time going down) and a picture (threads as rows, operations as bars, the
 * steps of the longest explanation numbered, the impossible step in red),
 * as SVG or as an HTML page that holds both.
 */
#ifndef WINSYNC_VERIFY_RENDER_H
#define WINSYNC_VERIFY_RENDER_H

#include <stdio.h>

#include "check.h"

void vc_write_timeline(FILE *f, const struct vc_report *r);
void vc_write_svg(FILE *f, const struct vc_report *r);
void vc_write_html(FILE *f, const struct vc_report *r);

#endif /* WINSYNC_VERIFY_RENDER_H */
