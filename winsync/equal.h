/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Are two handle lists equal?  The memo's question (memo.h), asked on every
 * wait on four or more objects, so that a poll over 64 handles whose first
 * is signaled spends much of its time here: 256 bytes against the kept copy.
 *
 * memcmp finds where two buffers differ, through libc's PLT and its
 * dispatch on the size; the memo only asks whether they do.  On x86 with
 * AVX2 (checked at run time: the library is built for the baseline ISA)
 * 32 bytes of each list are loaded at a time, XORed and ORed into two
 * accumulators, with no branch until the end.  perf, set + wait_any over
 * 64 handles with #0 signaled: about 4.7 ns of 18 in memcmp, 3 with AVX2.
 */
#ifndef WINSYNC_EQUAL_H
#define WINSYNC_EQUAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define WS_EQUAL_AVX2 1
/* For count >= 16, on a CPU with AVX2 only. */
bool ws_words_equal_avx2(const uint32_t *a, const uint32_t *b, uint32_t count);
#endif

static inline bool ws_words_equal(const uint32_t *a, const uint32_t *b, uint32_t count)
{
#ifdef WS_EQUAL_AVX2
	/* One load and a test of libgcc's feature word, set by its constructor. */
	if (count >= 16 && __builtin_cpu_supports("avx2"))
		return ws_words_equal_avx2(a, b, count);
#endif
	return memcmp(a, b, count * sizeof(*a)) == 0;
}

#endif
