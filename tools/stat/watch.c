/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --watch: redraw like top until q; without a terminal, until killed. */
#include "stat.h"

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved;
static bool raw;

static void restore(void)
{
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	raw = false;
}

static void on_signal(int sig)
{
	restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Keys without Enter, no echo; put back on exit and on fatal signals. */
static void keys_raw(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved) < 0)
		return;
	t = saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &t) < 0)
		return;
	raw = true;
	atexit(restore);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

/* Waits up to ms; true if q (or the end of input on a terminal) was typed. */
static bool quit_typed(unsigned ms)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char c;

	if (!raw) {
		usleep(ms * 1000u);
		return false;
	}
	while (poll(&p, 1, (int)ms) > 0) {
		if (read(STDIN_FILENO, &c, 1) != 1)
			return true;
		if (c == 'q' || c == 'Q')
			return true;
		ms = 0; /* other keys: redraw now */
	}
	return false;
}

int stat_watch(int (*show)(FILE *out, void *ctx), void *ctx, unsigned interval_ms)
{
	bool tty = isatty(STDOUT_FILENO);

	keys_raw();
	for (;;) {
		int ret;

		if (tty)
			fputs("\033[H\033[2J", stdout); /* home, clear */
		ret = show(stdout, ctx);
		fprintf(stdout, "\n(every %.1f s; q quits)\n", interval_ms / 1000.0);
		fflush(stdout);
		if (ret)
			fprintf(stderr, "winsync-stat: the arena cannot be read now\n");
		if (quit_typed(interval_ms))
			break;
	}
	restore();
	return 0;
}
