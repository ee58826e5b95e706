/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_common.h>

#include "gnio_hist.h"

void
gnio_hist_merge(struct gnio_hist *dst, const struct gnio_hist *src)
{
	for (unsigned int i = 0; i < GNIO_HIST_BUCKETS; i++)
		dst->bucket[i] += __atomic_load_n(&src->bucket[i], __ATOMIC_RELAXED);
	dst->count += __atomic_load_n(&src->count, __ATOMIC_RELAXED);
	dst->sum += __atomic_load_n(&src->sum, __ATOMIC_RELAXED);
	dst->max = RTE_MAX(dst->max, __atomic_load_n(&src->max, __ATOMIC_RELAXED));
}

uint64_t
gnio_hist_quantile(const struct gnio_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	rank = (uint64_t)(q * (double)(h->count - 1)) + 1;
	for (unsigned int b = 0; b < GNIO_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank) {
			uint64_t lo = gnio_hist_bucket_low(b);
			uint64_t hi = b + 1 < GNIO_HIST_BUCKETS ? gnio_hist_bucket_low(b + 1) : lo;
			uint64_t mid = lo + (hi - lo) / 2;

			return RTE_MIN(mid, h->max);
		}
	}
	return h->max;
}
