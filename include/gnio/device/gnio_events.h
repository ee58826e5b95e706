/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The event channel, handler side: a handler pushes fixed-size records (a
 * quote update, an inference result, an alert) that the application drains on
 * the CPU (gnio_events_drain(), <gnio/gnio_state.h>). A full channel refuses
 * the record and counts it; nothing blocks. Pure header: host and device code
 * (the same push on the host consumer and in a kernel), C, C++ and nvcc.
 *
 * Protocol, per record r (a sequence number):
 *  - a pusher reserves r with a compare-and-swap on @c reserve, only while
 *    r - consumed < size (else it counts a drop);
 *  - it writes the record, then stores r + 1 into seq[r % size] with release
 *    order at system scope (the CPU that sees it sees the record);
 *  - the CPU takes records in order while seq[consumed % size] == consumed + 1,
 *    then stores consumed with release order (the slot may be reused).
 */
#ifndef GNIO_EVENTS_H
#define GNIO_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../gnio_hd.h"
#include "gnio_shm.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One channel, as handlers see it (in memory both the CPU and the pushers
 * reach). Written by gnio at creation; the counters as the protocol says.
 */
struct gnio_event_ring {
	uint32_t *reserve;          /**< next record number (pushers' side: device memory on a GPU) */
	uint32_t *dropped;          /**< pushes refused, the channel full (pushers' side) */
	const uint32_t *consumed;   /**< records the CPU took (CPU writes) */
	uint32_t *seq;              /**< [size]: r + 1 once record r is complete */
	uint8_t *rec;               /**< [size * rec_size] */
	uint32_t mask;              /**< size - 1 (size a power of two) */
	uint32_t rec_size;          /**< bytes per record */
};

/**
 * Push one record (one thread; any number of threads may push at once).
 * @param ev the channel (gnio_events_ring(), from the handler's state)
 * @param record ev->rec_size bytes
 * @return 0, or -1 when the channel was full (counted in ev->dropped)
 */
GNIO_HD static inline int
gnio_event_push(const struct gnio_event_ring *ev, const void *record)
{
	uint32_t r, c;
	uint8_t *dst;

	for (;;) {
#ifdef __CUDA_ARCH__
		r = gnio_shm_dev_gpu_peek(ev->reserve);
		c = gnio_shm_dev_flag_load(ev->consumed);
		if (r - c > ev->mask) {
			atomicAdd(ev->dropped, 1u);
			return -1;
		}
		if (atomicCAS(ev->reserve, r, r + 1) == r)
			break;
#else
		r = __atomic_load_n(ev->reserve, __ATOMIC_RELAXED);
		c = __atomic_load_n(ev->consumed, __ATOMIC_ACQUIRE);
		if (r - c > ev->mask) {
			__atomic_fetch_add(ev->dropped, 1u, __ATOMIC_RELAXED);
			return -1;
		}
		if (__atomic_compare_exchange_n(ev->reserve, &r, r + 1, false, __ATOMIC_ACQUIRE,
				__ATOMIC_RELAXED))
			break;
#endif
	}
	dst = ev->rec + (size_t)(r & ev->mask) * ev->rec_size;
	memcpy(dst, record, ev->rec_size);
#ifdef __CUDA_ARCH__
	gnio_shm_dev_status_release(&ev->seq[r & ev->mask], r + 1);
#else
	__atomic_store_n(&ev->seq[r & ev->mask], r + 1, __ATOMIC_RELEASE);
#endif
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* GNIO_EVENTS_H */
