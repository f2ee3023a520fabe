/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * winsync-verify-record-*.exe: the recorder as a Windows program, run
 * under Wine by `winsync-verify run --backend wine-...`.  Built twice from
 * this source: on kernel32 (Wine's own objects, with or without Wine's
 * winsync backend) and on winsync.dll (WINSYNC_WIN32_REPLACE).  Writes the
 * history on stdout.
 *
 *   winsync-verify-record-X.exe --name BACKEND [workload options] [--time]
 *     --time   run the calls without recording them
 * Last line, with or without --time: "# calls N ns T cpu C", the calls made,
 * the time they took together and the processor time meanwhile (for
 * `winsync-verify overhead`).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <io.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "backends.h"

int main(int argc, char **argv)
{
	struct vw_config config;
	struct vw_workload w;
	struct vr_backend backend = vr_backend_win32;
	struct vh_history h;
	struct vr_times times = { 0, 0, 0 };
	bool record = true;

	va_defaults(&config);
	for (int i = 1; i < argc; i++) {
		int taken = va_take(&config, argc, argv, &i);

		if (taken < 0)
			return 3;
		if (taken)
			continue;
		if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			backend.name = argv[++i];
		} else if (!strcmp(argv[i], "--time")) {
			record = false;
		} else {
			fprintf(stderr, "winsync-verify-record: unknown argument '%s'\n", argv[i]);
			return 3;
		}
	}
	config.caps = backend.caps;
	/* The history is text with \n line ends: no \r\n from the C runtime. */
	_setmode(_fileno(stdout), _O_BINARY);
	if (vw_generate(&config, &w)) {
		fprintf(stderr, "winsync-verify-record: bad workload\n");
		return 3;
	}
	if (vr_run(&w, &backend, record, &h, &times)) {
		vw_free(&w);
		return 3;
	}
	if (record) {
		if (vh_write(stdout, &h))
			return 3;
		vh_free(&h);
	}
	/* A comment line (the reader skips it): what the calls took, for `overhead`. */
	printf("# calls %" PRIu64 " ns %" PRIu64 " cpu %" PRIu64 "\n", times.calls, times.elapsed_ns,
	       times.cpu_ns);
	vw_free(&w);
	return 0;
}
