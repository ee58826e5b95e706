/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Memory shared by the CPU and the consumer (a CPU worker or a GPU kernel):
 * its layout and the only helpers that touch it. Pure header (host and device).
 *
 * Protocol of one burst-queue item (a struct rte_gpu_comm_list entry):
 *  - FREE -> READY: the RX lcore writes the packet descriptors, the rx port and
 *    num_pkts (in the item, and with the sequence number in the status line:
 *    GNIO_BQ_SEQ_WORD, GNIO_BQ_META_WORD), calls rte_gpu_wmb() (so a GPU sees
 *    those writes first), then gnio_shm_publish() stores READY with release
 *    order.
 *  - READY -> DONE: the consumer loads the status with acquire order
 *    (gnio_shm_*_acquire), so it sees everything written before READY, runs the
 *    engine, writes one verdict per packet, then stores DONE with release order
 *    (system scope on the GPU), so the completion lcore that loads DONE with
 *    acquire order sees every verdict and every byte the engine wrote.
 *  - DONE -> FREE: the completion lcore transmits or frees the mbufs, clears
 *    num_pkts, then stores FREE with release order; the RX lcore may reuse the
 *    item once it loads FREE with acquire order.
 * Each status word has a 128-byte line of its own (GNIO_BQ_STATUS_STRIDE), so
 * a consumer polling one item does not share a line with its neighbours.
 */
#ifndef GNIO_SHM_H
#define GNIO_SHM_H

#include "../gnio_hd.h"
#include "../gnio_seg.h"
#include "gnio_line.h"

/** Item states; equal to enum rte_gpu_comm_list_status (checked in burstq.c). */
#define GNIO_BQ_FREE 0u     /**< the producer may fill it */
#define GNIO_BQ_READY 1u    /**< filled: the consumer's */
#define GNIO_BQ_DONE 2u     /**< verdicts written: completion's */
#define GNIO_BQ_ERROR 3u    /**< the consumer failed on it: its packets are dropped */

/** Set in gnio_bq_dev.item_uniform when every verdict of an item names one port. */
#define GNIO_BQ_UNIFORM 0x80000000u

/**
 * Values of a consumer's quit flag (CPU writes, consumer polls in every spin
 * loop): 0 run; GNIO_QUIT_DRAIN: the producers stopped, complete what was
 * published, then leave; GNIO_QUIT_NOW: take no more items, finish the one in
 * hand and leave (what is still READY is the CPU's to drop).
 */
#define GNIO_QUIT_DRAIN 1u  /**< complete what was published, then leave */
#define GNIO_QUIT_NOW 2u    /**< finish the item in hand, then leave */

/** Distance between two items' status words, in 32-bit words (128 bytes). */
#define GNIO_BQ_STATUS_STRIDE 32u

/**
 * Word of the status line (after the status word) holding the sequence number
 * of the item last published into it, written before READY. A consumer that
 * runs ahead of completion (the persistent kernel's dispatcher) reads status
 * and sequence as one 64-bit element: READY of the previous lap of the ring has
 * the old sequence number. (The producer writes a slot only once it is FREE,
 * so a new sequence number is never seen next to an old READY.)
 */
#define GNIO_BQ_SEQ_WORD 1u

/**
 * Words 2 and 3 of the status line: the item's packet count and RX port
 * (GNIO_BQ_META(count, port)), then its sequence number again, written as one
 * 64-bit store before READY. A poller that reads the first 16 bytes of the
 * line gets status and sequence (one 64-bit element) and count, port and
 * sequence (the other): each element tells by its own sequence number whether
 * it is this lap's, so the poller needs no second round trip for the header.
 */
#define GNIO_BQ_META_WORD 2u
/** The word of GNIO_BQ_META_WORD: @p count packets from RX port @p port. */
#define GNIO_BQ_META(count, port) ((uint32_t)(count) | (uint32_t)(port) << 16)
/** The packet count of a GNIO_BQ_META word. */
#define GNIO_BQ_META_COUNT(m) ((m) & 0xffffu)
/** The RX port of a GNIO_BQ_META word. */
#define GNIO_BQ_META_PORT(m) ((uint16_t)((m) >> 16))

/**
 * Segments described per item for its chained packets, per packet on
 * average (a 9000 B frame in 2 KiB mbufs has 4 after its first). A chained
 * packet that no longer fits is marked not described (GNIO_BQ_SEGS(0, 0)).
 */
#define GNIO_BQ_SEGS_PER_PKT 4u

/** gnio_bq_dev.pkt_segs of a chained packet: its first entry in the item's table, and count. */
#define GNIO_BQ_SEGS(first, count) ((uint32_t)(first) << 16 | (uint32_t)(count))
/** The first entry of a GNIO_BQ_SEGS value. */
#define GNIO_BQ_SEGS_FIRST(v) ((v) >> 16)
/** The count of a GNIO_BQ_SEGS value (0: not described). */
#define GNIO_BQ_SEGS_COUNT(v) ((v) & 0xffffu)

/** Same layout as struct rte_gpu_comm_pkt (checked in burstq.c). */
struct gnio_comm_pkt {
	uintptr_t addr;      /**< first byte of the packet (first segment) */
	size_t size;         /**< bytes readable at addr */
};

/** Same layout as struct rte_gpu_comm_list (checked in burstq.c). */
struct gnio_comm_item {
	uint16_t dev_id;                  /**< gpudev device */
	void *mbufs;                      /**< host only */
	struct gnio_comm_pkt *pkt_list;   /**< producer writes, consumer reads */
	uint32_t num_pkts;                /**< producer writes before READY */
	uint32_t *status_h;               /**< CPU address of the status word */
	uint32_t *status_d;               /**< consumer's address of the status word */
};

/**
 * What a consumer needs of one burst queue. Written by the host at creation,
 * read-only afterwards; lives in memory registered with the GPU.
 */
struct gnio_bq_dev {
	struct gnio_comm_item *items;   /**< the rte_gpu_comm_list array */
	uint32_t *status;               /**< item i's status line: status + i * GNIO_BQ_STATUS_STRIDE
	                                     (the line items[i].status_d points at) */
	uint16_t *verdicts;             /**< [nb_items * max_pkts]: consumer writes, completion reads */
	uint16_t *item_port;            /**< [nb_items]: RX port of each item, producer writes */
	uint32_t *pkt_len;              /**< [nb_items * max_pkts]: whole length of each packet
	                                     (descriptors' size is the first segment), producer writes */
	/**
	 * [nb_items]: GNIO_BQ_UNIFORM | port when every verdict of the item is that
	 * port, else 0. Consumer writes before DONE, completion reads after DONE.
	 */
	uint32_t *item_uniform;
	/**
	 * Chained packets (pkt_len above the descriptor's size): [nb_items * seg_cap]
	 * segments after the first, and [nb_items * max_pkts] GNIO_BQ_SEGS(first,
	 * count) per packet, written only for chained packets (count 0: not
	 * described). Producer writes before READY; consumers read.
	 */
	struct gnio_seg *segs;
	uint32_t *pkt_segs;             /**< [nb_items * max_pkts] GNIO_BQ_SEGS per packet (above) */
	uint32_t seg_cap;               /**< segs entries per item */
	uint32_t nb_items;              /**< power of two */
	uint32_t max_pkts;              /**< packets per item at most */
	/* The latency flavour (flagged lines, gnio_line.h); lq_inline 0: not this flavour. */
	uint64_t *lq_req;               /**< [lq_slots * gnio_lq_slot_words(lq_inline)] request
	                                     slots: the producer writes, the consumer polls */
	uint64_t *lq_ans;               /**< answer slots, same size: the consumer writes,
	                                     completion reads and zeroes */
	const struct gnio_seg *lq_segs; /**< [lq_slots * GNIO_LQ_SEGS] long packets' segments
	                                     past the inline bytes (read only) */
	uint32_t lq_slots;              /**< request and answer slots, a power of two */
	uint32_t lq_inline;             /**< packet bytes copied into each request slot */
	uint64_t *item_tsc;             /**< [nb_items]: the CPU's TSC (rte_rdtsc()) when the
	                                     item's first packet was received, producer writes
	                                     before READY */
};

#ifndef __CUDA_ARCH__
/* ---- CPU side ---------------------------------------------------------- */

/**
 * Load an item status with acquire order: everything written before it was
 * stored is visible.
 * @param status the status word
 * @return the status
 */
static inline uint32_t
gnio_shm_status_acquire(const uint32_t *status)
{
	return __atomic_load_n(status, __ATOMIC_ACQUIRE);
}

/**
 * Store an item status with release order, after all writes that describe
 * the item. A GPU consumer also needs rte_gpu_wmb() before this (gnio_burstq
 * does it).
 * @param status the status word
 * @param v the new status
 */
static inline void
gnio_shm_status_release(uint32_t *status, uint32_t v)
{
	__atomic_store_n(status, v, __ATOMIC_RELEASE);
}

/**
 * Read a control flag (quit, progress counters), acquire order.
 * @param flag the flag
 * @return its value
 */
static inline uint32_t
gnio_shm_flag_load(const uint32_t *flag)
{
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/**
 * Write a control flag; earlier writes are visible to whoever sees the new value.
 * @param flag the flag
 * @param v its new value
 */
static inline void
gnio_shm_flag_store(uint32_t *flag, uint32_t v)
{
	__atomic_store_n(flag, v, __ATOMIC_RELEASE);
}

/**
 * Read a 64-bit progress counter written by the consumer (relaxed).
 * @param c the counter
 * @return its value
 */
static inline uint64_t
gnio_shm_counter_load(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}
#endif /* !__CUDA_ARCH__ */

#ifdef __CUDACC__
/* ---- GPU side ---------------------------------------------------------- */

/**
 * Poll an item status without ordering (fetched again from memory each time).
 * Once it shows the awaited value, call gnio_shm_dev_acquire_fence() before
 * touching what it announces: the fence is paid once per item, not per poll.
 */
__device__ __forceinline__ uint32_t
gnio_shm_dev_status_poll(const uint32_t *status)
{
	uint32_t v;

	asm volatile("ld.global.cv.u32 %0, [%1];" : "=r"(v) : "l"(status) : "memory");
	return v;
}

/**
 * Load the first 16 bytes of a status line with acquire order at system
 * scope, as two 64-bit elements: @p head (status | sequence << 32) and
 * @p meta (GNIO_BQ_META word | sequence << 32). When both carry the awaited
 * sequence number and the status is READY, the item's descriptors and
 * packets are visible to this thread's later loads: no separate fence.
 */
__device__ __forceinline__ void
gnio_shm_dev_status_line_acquire(const uint32_t *line, uint64_t *head, uint64_t *meta)
{
	uint64_t a, b;

	asm volatile("ld.acquire.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(line)
			: "memory");
	*head = a;
	*meta = b;
}

/** Acquire side of a poll that saw READY: later loads are ordered after it. */
__device__ __forceinline__ void
gnio_shm_dev_acquire_fence(void)
{
	asm volatile("fence.acq_rel.sys;" : : : "memory");
}

/**
 * Load an item status with acquire order at system scope: the descriptors and
 * packet bytes the CPU wrote before publishing READY are visible after it.
 * The load is ld.global.cv ("consider cached system memory lines stale, fetch
 * again"): on the H200, a polling kernel kept seeing its own DONE in a cached
 * line after the CPU had stored FREE and READY over it. The fence then orders
 * every later load of this thread after it (kernels are built with
 * -Xptxas -dlcm=cv, so those loads fetch host memory again too).
 */
__device__ __forceinline__ uint32_t
gnio_shm_dev_status_acquire(const uint32_t *status)
{
	uint32_t v = gnio_shm_dev_status_poll(status);

	gnio_shm_dev_acquire_fence();
	return v;
}

/**
 * Store an item status with release order at system scope: the verdicts and
 * packet bytes this thread (and, after __syncthreads(), its block) wrote are
 * visible to a CPU that loads the status with acquire order.
 */
__device__ __forceinline__ void
gnio_shm_dev_status_release(uint32_t *status, uint32_t v)
{
	asm volatile("st.release.sys.global.u32 [%0], %1;" : : "l"(status), "r"(v) : "memory");
}

/**
 * Poll 16 bytes (aligned) of a flagged line (gnio_line.h) as two words,
 * fetched again from host memory every time (ld.global.cv: a poll served from
 * a stale cached copy was seen on the H200, see docs/GPU.md).
 */
__device__ __forceinline__ void
gnio_shm_dev_line_load(const uint64_t *p, uint64_t *a, uint64_t *b)
{
	uint64_t x, y;

	asm volatile("ld.global.cv.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
	*a = x;
	*b = y;
}

/** Store one word of a flagged line to host memory (relaxed, system scope: no fence). */
__device__ __forceinline__ void
gnio_shm_dev_line_store(uint64_t *p, uint64_t v)
{
	asm volatile("st.relaxed.sys.global.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}

/**
 * Store two words (16 bytes, aligned) of a tagged line to host memory with one
 * store (relaxed, system scope: no fence; each 8-byte half single-copy atomic).
 */
__device__ __forceinline__ void
gnio_shm_dev_line_store2(uint64_t *p, uint64_t a, uint64_t b)
{
	asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" : : "l"(p), "l"(a), "l"(b) : "memory");
}

/** Read a CPU-written control flag (quit): fetched again from memory every time. */
__device__ __forceinline__ uint32_t
gnio_shm_dev_flag_load(const uint32_t *flag)
{
	uint32_t v;

	asm volatile("ld.global.cv.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
	return v;
}

/** Publish a progress counter to the CPU (watchdog): relaxed, system scope. */
__device__ __forceinline__ void
gnio_shm_dev_counter_store(uint64_t *c, uint64_t v)
{
	asm volatile("st.relaxed.sys.global.u64 [%0], %1;" : : "l"(c), "l"(v) : "memory");
}
/** Load a word written by another warp of the same GPU, with GPU-scope acquire (cached in L2). */
__device__ __forceinline__ uint32_t
gnio_shm_dev_gpu_acquire(const uint32_t *p)
{
	uint32_t v;

	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

/** Load a word written by another warp of the same GPU, no ordering (a hint, read in L2). */
__device__ __forceinline__ uint32_t
gnio_shm_dev_gpu_peek(const uint32_t *p)
{
	uint32_t v;

	asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

/** Store a word for other warps of the same GPU, with GPU-scope release. */
__device__ __forceinline__ void
gnio_shm_dev_gpu_release(uint32_t *p, uint32_t v)
{
	asm volatile("st.release.gpu.global.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

/**
 * Meet @p threads threads of the block (whole warps) at named barrier @p id:
 * what each wrote before (shared or global memory) is seen by the others after.
 */
__device__ __forceinline__ void
gnio_shm_dev_barrier(unsigned int id, unsigned int threads)
{
	asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(threads) : "memory");
}

/** The GPU's global timer in nanoseconds (the kernel's own time accounting). */
__device__ __forceinline__ uint64_t
gnio_shm_dev_time_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/**
 * The global timer, read only once @p dep (a loaded value) has arrived: the
 * compare waits for the load, and the timer is read after it in order. For
 * timing a round trip without changing what the code waits for.
 */
__device__ __forceinline__ uint64_t
gnio_shm_dev_time_after(uint32_t dep)
{
	uint64_t t;

	asm volatile("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %1, 0x5a5a5a5a;\n\t"
			"@p nanosleep.u32 0;\n\tmov.u64 %0, %%globaltimer;\n\t}"
			: "=l"(t) : "r"(dep) : "memory");
	return t;
}
#endif /* __CUDACC__ */

#endif /* GNIO_SHM_H */
