/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Equal handle lists with AVX2: see equal.h. */
#include "equal.h"

#ifdef WS_EQUAL_AVX2
#include <immintrin.h>

__attribute__((target("avx2"))) bool ws_words_equal_avx2(const uint32_t *a, const uint32_t *b,
							  uint32_t count)
{
	__m256i diff0 = _mm256_setzero_si256(), diff1 = _mm256_setzero_si256();
	uint32_t i = 0, tail = 0;

	/* Two accumulators, so that each OR waits for neither. */
	for (; i + 16 <= count; i += 16) {
		diff0 = _mm256_or_si256(diff0,
					_mm256_xor_si256(_mm256_loadu_si256((const void *)(a + i)),
							 _mm256_loadu_si256((const void *)(b + i))));
		diff1 = _mm256_or_si256(diff1,
					_mm256_xor_si256(_mm256_loadu_si256((const void *)(a + i + 8)),
							 _mm256_loadu_si256((const void *)(b + i + 8))));
	}
	for (; i < count; i++)
		tail |= a[i] ^ b[i];
	diff0 = _mm256_or_si256(diff0, diff1);
	return _mm256_testz_si256(diff0, diff0) && !tail;
}
#endif
