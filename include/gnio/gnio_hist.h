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

#ifdef __cplusplus
extern "C" {
#endif

/** log2 of the sub-buckets per power of two. */
#define GNIO_HIST_SUB_BITS 4
/** Sub-buckets per power of two (values below it have a bucket each). */
#define GNIO_HIST_SUB (1u << GNIO_HIST_SUB_BITS)
/** Buckets of a histogram: every uint64_t value has one. */
#define GNIO_HIST_BUCKETS (GNIO_HIST_SUB * (64 - GNIO_HIST_SUB_BITS + 1))

/** Histogram of 64-bit values. */
struct gnio_hist {
	uint64_t count;                        /**< values recorded */
	uint64_t max;                          /**< the largest */
	uint64_t sum;                          /**< their sum (mean = sum / count) */
	uint64_t bucket[GNIO_HIST_BUCKETS];    /**< values per bucket (gnio_hist_bucket()) */
};

/**
 * The bucket a value falls in.
 * @param v the value
 * @return its bucket, < GNIO_HIST_BUCKETS
 */
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

/**
 * The smallest value that falls in a bucket.
 * @param b a bucket, < GNIO_HIST_BUCKETS
 * @return the value
 */
static inline uint64_t
gnio_hist_bucket_low(unsigned int b)
{
	unsigned int o;

	if (b < GNIO_HIST_SUB)
		return b;
	o = b / GNIO_HIST_SUB + GNIO_HIST_SUB_BITS - 1;
	return ((uint64_t)1 << o) | ((uint64_t)(b % GNIO_HIST_SUB) << (o - GNIO_HIST_SUB_BITS));
}

/**
 * Record one value (one writer at a time).
 * @param h the histogram
 * @param v the value
 */
static inline void
gnio_hist_add(struct gnio_hist *h, uint64_t v)
{
	h->bucket[gnio_hist_bucket(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

/**
 * Add one histogram into another.
 * @param dst what grows
 * @param src what is added (unchanged)
 */
void gnio_hist_merge(struct gnio_hist *dst, const struct gnio_hist *src);

/**
 * The value at a quantile: the middle of the bucket holding it, at most the
 * maximum seen (relative error under 1/16).
 * @param h the histogram
 * @param q the quantile, 0..1 (0.5: the median)
 * @return the value, 0 for an empty histogram
 */
uint64_t gnio_hist_quantile(const struct gnio_hist *h, double q);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_HIST_H */
