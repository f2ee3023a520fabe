/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small seeded generator (xorshift64*, seeded through splitmix64): one per actor. */
#ifndef WINSYNC_RANDOM_RNG_H
#define WINSYNC_RANDOM_RNG_H

#include <stdbool.h>
#include <stdint.h>

struct rt_rng {
	uint64_t s;
};

static inline uint64_t rt_mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Stream `stream` of seed `seed`: every actor gets its own, reproducibly. */
static inline void rt_rng_init(struct rt_rng *r, uint64_t seed, uint64_t stream)
{
	r->s = rt_mix(seed ^ rt_mix(stream));
	if (!r->s)
		r->s = 1;
}

static inline uint64_t rt_u64(struct rt_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

static inline uint32_t rt_u32(struct rt_rng *r)
{
	return (uint32_t)(rt_u64(r) >> 32);
}

/* Uniform in [0, n); 0 when n is 0. */
static inline uint32_t rt_below(struct rt_rng *r, uint32_t n)
{
	return (uint32_t)(((uint64_t)rt_u32(r) * n) >> 32);
}

static inline bool rt_pct(struct rt_rng *r, uint32_t percent)
{
	return rt_below(r, 100) < percent;
}

/* Uniform in [lo, hi]. */
static inline uint32_t rt_range(struct rt_rng *r, uint32_t lo, uint32_t hi)
{
	return lo + rt_below(r, hi - lo + 1);
}

#endif
