/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Log-bucket latency histogram: 16 sub-buckets per power of two (relative
 * error under 1/16), fixed size, no allocation, one writer. Used per
 * completion lcore for "rx_burst return to completion seen", in TSC cycles.
 */
#ifndef GNIO_HIST_H
#define GNIO_HIST_H

#include <stdint.h>

#define GNIO_HIST_SUB_BITS 4
#define GNIO_HIST_SUB (1u << GNIO_HIST_SUB_BITS)
#define GNIO_HIST_BUCKETS (GNIO_HIST_SUB * (64 - GNIO_HIST_SUB_BITS + 1))

/** Histogram of 64-bit values. */
struct gnio_hist {
	uint64_t count;
	uint64_t max;
	uint64_t sum;
	uint64_t bucket[GNIO_HIST_BUCKETS];
};

/** Bucket of a value. */
static inline unsigned int
gnio_hist_bucket(uint64_t v)
{
	unsigned int o;

	if (v < GNIO_HIST_SUB)
		return (unsigned int)v;
	o = 63u - (unsigned int)__builtin_clzll(v);
	return (o - GNIO_HIST_SUB_BITS + 1) * GNIO_HIST_SUB +
		(unsigned int)((v >> (o - GNIO_HIST_SUB_BITS)) & (GNIO_HIST_SUB - 1));
}

/** Smallest value that falls in bucket @p b. */
static inline uint64_t
gnio_hist_bucket_low(unsigned int b)
{
	unsigned int o;

	if (b < GNIO_HIST_SUB)
		return b;
	o = b / GNIO_HIST_SUB + GNIO_HIST_SUB_BITS - 1;
	return ((uint64_t)1 << o) | ((uint64_t)(b % GNIO_HIST_SUB) << (o - GNIO_HIST_SUB_BITS));
}

/** Record one value (single writer). */
static inline void
gnio_hist_add(struct gnio_hist *h, uint64_t v)
{
	h->bucket[gnio_hist_bucket(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

/** Add @p src into @p dst. */
void gnio_hist_merge(struct gnio_hist *dst, const struct gnio_hist *src);

/**
 * Value at quantile @p q (0..1): the middle of the bucket holding it, at most
 * the maximum seen. 0 for an empty histogram.
 */
uint64_t gnio_hist_quantile(const struct gnio_hist *h, double q);

#endif /* GNIO_HIST_H */
