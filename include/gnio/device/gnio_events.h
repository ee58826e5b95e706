/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The event channel, handler side: a handler pushes fixed-size records (a
 * quote update, an inference result, an alert) that the application drains on
 * the CPU (gnio_events_drain(), <gnio/gnio_state.h>). A full channel refuses
 * the record and counts it; nothing blocks. Pure header: host and device code
 * (the same push on the host consumer and in a kernel), C, C++ and nvcc.
 *
 * Protocol, per record r (a sequence number), in the flagged lines' tagged
 * words (<gnio/device/gnio_line.h>: NCCL's "LL" idea), so that no fence is
 * needed on either side:
 *  - a pusher reserves r with a compare-and-swap on @c reserve, only while
 *    r - consumed < size (else it counts a drop);
 *  - it writes the record as rec_words 64-bit words, word j holding bytes
 *    4j .. 4j + 3 of the record (little-endian, zero past rec_size) and the
 *    tag GNIO_LQ_TAG(r), in any order and with any number of threads (an
 *    8-byte store is single-copy atomic: a word with r's tag has r's bytes);
 *  - the CPU takes record consumed once every one of its words carries its
 *    tag (gnio_event_read()), then stores consumed with release order (the
 *    slot may be reused: its next record's tag differs, size <= 2^30).
 * The GPU writes words to host memory with relaxed system-scope stores, two
 * words (16 bytes) a store: a record is visible as soon as its stores land,
 * without the system fence a separate "complete" word would need after them.
 */
#ifndef GNIO_EVENTS_H
#define GNIO_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../gnio_hd.h"
#include "gnio_line.h"
#include "gnio_shm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Records of a channel, at most (a tag has 31 bits of the record number: a slot's next record's differs). */
#define GNIO_EVENT_MAX_RECORDS (1u << 30)

/**
 * One channel, as handlers see it (in memory both the CPU and the pushers
 * reach). Written by gnio at creation; the counters as the protocol says.
 */
struct gnio_event_ring {
	uint32_t *reserve;          /**< next record number (pushers' side: device memory on a GPU) */
	uint32_t *dropped;          /**< pushes refused, the channel full (pushers' side) */
	const uint32_t *consumed;   /**< records the CPU took (CPU writes) */
	uint64_t *words;            /**< [size * rec_words] tagged words, record r at (r % size) * rec_words (16-byte aligned) */
	uint32_t mask;              /**< size - 1 (size a power of two) */
	uint32_t rec_size;          /**< bytes per record */
	uint32_t rec_words;         /**< words per record: gnio_event_rec_words(rec_size) */
	uint32_t rsvd;              /**< 0 */
};

/**
 * Words a record of @p rec_size bytes takes in a channel: 4 bytes each,
 * rounded up to whole 16-byte pairs (each pair one store). A constant
 * expression, for a channel laid out in static memory.
 */
#define GNIO_EVENT_REC_WORDS(rec_size) (((rec_size) + 7u) / 8u * 2u)

/**
 * Words a record of @p rec_size bytes takes in a channel (GNIO_EVENT_REC_WORDS()).
 * @param rec_size bytes per record
 * @return its words
 */
GNIO_HD static inline uint32_t
gnio_event_rec_words(uint32_t rec_size)
{
	return GNIO_EVENT_REC_WORDS(rec_size);
}

/**
 * Where record @p r's words are.
 * @param ev the channel
 * @param r the record number
 * @return its first word
 */
GNIO_HD static inline uint64_t *
gnio_event_slot(const struct gnio_event_ring *ev, uint32_t r)
{
	return ev->words + (size_t)(r & ev->mask) * ev->rec_words;
}

/**
 * Write words 2q and 2q + 1 of record @p r (its bytes 8q .. 8q + 7) with one
 * store; any thread may write any pair, in any order.
 * @param ev the channel
 * @param r the record number (reserved by the caller)
 * @param q the pair, 0 .. rec_words / 2 - 1
 * @param record the whole record, rec_size bytes
 */
GNIO_HD static inline void
gnio_event_write_pair(const struct gnio_event_ring *ev, uint32_t r, uint32_t q, const void *record)
{
	const uint8_t *src = (const uint8_t *)record + 8u * q;
	uint32_t n = ev->rec_size - 8u * q < 8u ? ev->rec_size - 8u * q : 8u, lo, hi;
	uint64_t *w = gnio_event_slot(ev, r) + 2u * q, v = 0;

	/* (Little-endian, as the CPU reads it back: bytes 0-3 in the first word.) */
#ifdef __CUDA_ARCH__
	if (n == 8u && ((uintptr_t)src & 7u) == 0)
		v = *(const uint64_t *)src;     /* one load, not eight (memcpy's, alignment unknown) */
	else
#endif
		memcpy(&v, src, n);
	lo = (uint32_t)v;
	hi = (uint32_t)(v >> 32);
#ifdef __CUDA_ARCH__
	gnio_shm_dev_line_store2(w, gnio_lq_word(lo, r), gnio_lq_word(hi, r));
#else
	__atomic_store_n(&w[0], gnio_lq_word(lo, r), __ATOMIC_RELAXED);
	__atomic_store_n(&w[1], gnio_lq_word(hi, r), __ATOMIC_RELAXED);
#endif
}

/**
 * Write record @p r whole (one thread).
 * @param ev the channel
 * @param r the record number (reserved by the caller)
 * @param record rec_size bytes
 */
GNIO_HD static inline void
gnio_event_write(const struct gnio_event_ring *ev, uint32_t r, const void *record)
{
	for (uint32_t q = 0; q < ev->rec_words / 2u; q++)
		gnio_event_write_pair(ev, r, q, record);
}

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
	gnio_event_write(ev, r, record);
	return 0;
}

#ifndef __CUDA_ARCH__
/**
 * The CPU's side: is record @p r whole (every word carries its tag)? If so,
 * its bytes into @p out. Each word is read once, so the bytes are the ones
 * whose tags were checked.
 * @param ev the channel
 * @param r the record number (not yet consumed: its slot is not reused)
 * @param out rec_size bytes (written only in part when the record is not whole)
 * @return true when the record was whole and copied
 */
static inline bool
gnio_event_read(const struct gnio_event_ring *ev, uint32_t r, void *out)
{
	const uint64_t *w = gnio_event_slot(ev, r);
	uint8_t *o = (uint8_t *)out;

	for (uint32_t j = 0, at = 0; at < ev->rec_size; j++, at += 4) {
		uint64_t v = __atomic_load_n(&w[j], __ATOMIC_ACQUIRE);
		uint32_t p = gnio_lq_val(v);
		uint8_t b[4] = { (uint8_t)p, (uint8_t)(p >> 8), (uint8_t)(p >> 16), (uint8_t)(p >> 24) };

		if (!gnio_lq_is(v, r))
			return false;
		memcpy(o + at, b, ev->rec_size - at < 4u ? ev->rec_size - at : 4u);
	}
	return true;
}

/**
 * The CPU's side: is record @p r whole (every word carries its tag)?
 * @param ev the channel
 * @param r the record number
 * @return true when it is
 */
static inline bool
gnio_event_complete(const struct gnio_event_ring *ev, uint32_t r)
{
	const uint64_t *w = gnio_event_slot(ev, r);

	for (uint32_t j = 0; 4u * j < ev->rec_size; j++)
		if (!gnio_lq_is(__atomic_load_n(&w[j], __ATOMIC_ACQUIRE), r))
			return false;
	return true;
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* GNIO_EVENTS_H */
