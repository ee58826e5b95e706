/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Burst queue: a ring of rte_gpu_comm_list items between one producer (an RX
 * lcore), one consumer (host worker or GPU kernel, see gnio_shm.h) and one
 * completion lcore. Items complete in order.
 *
 * The latency flavour (gnio_burstq_conf.inline_bytes) keeps the items on the
 * CPU side (completion in order, the same calls) but hands each packet to the
 * consumer in flagged lines (gnio_line.h) at once; an item is done when every
 * packet of it was answered.
 *
 * Thread safety: gnio_burstq_add/publish/room are called by the producer only;
 * gnio_burstq_peek_done/release by the completion side only; create/destroy
 * when neither runs. Producer and completion may run on different lcores.
 */
#ifndef GNIO_BURSTQ_H
#define GNIO_BURSTQ_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "gnio_shm.h"

struct gnio_burstq;

/**
 * Whether @p n is a valid gnio_burstq_conf.inline_bytes (and gnio_conf's
 * queue.inline_bytes): 0, or GNIO_LQ_INLINE_MIN..GNIO_LQ_INLINE_MAX in steps
 * of GNIO_LQ_INLINE_STEP. The one statement of the rule: gnio_conf_check()
 * says why a value is refused.
 */
static inline bool
gnio_burstq_inline_ok(uint32_t n)
{
	return n == 0 || (n >= GNIO_LQ_INLINE_MIN && n <= GNIO_LQ_INLINE_MAX &&
			n % GNIO_LQ_INLINE_STEP == 0);
}

/** Creation parameters. */
struct gnio_burstq_conf {
	int16_t gpu_id;      /**< gpudev device the consumer runs on */
	uint32_t nb_items;   /**< ring size, a power of two >= 2 */
	uint32_t max_pkts;   /**< packets per item, 1..RTE_GPU_COMM_LIST_PKTS_MAX */
	int socket;          /**< NUMA node for host-side state */
	bool cpu_consumer;   /**< the consumer is a CPU thread: it reads the mbufs themselves,
	                          so no packet descriptors are written, and the release store
	                          orders enough (rte_gpu_wmb() is skipped) */
	uint16_t inline_bytes; /**< 0: items of descriptors; else the latency flavour
	                          (gnio_line.h): the first inline_bytes of each packet are
	                          written into flagged lines as soon as it is received, and the
	                          consumer answers in flagged lines; GNIO_LQ_INLINE_MIN ..
	                          GNIO_LQ_INLINE_MAX, a multiple of GNIO_LQ_INLINE_STEP */
};

/** A completed item, as seen by the completion lcore. */
struct gnio_bq_done {
	struct rte_mbuf **mbufs;   /**< the item's mbufs */
	const uint16_t *verdicts;  /**< one verdict per mbuf */
	uint32_t nb;               /**< number of mbufs */
	uint32_t status;           /**< GNIO_BQ_DONE, or GNIO_BQ_ERROR (verdicts unusable) */
	uint16_t rx_port;          /**< port the packets came from */
	uint32_t uniform;          /**< GNIO_BQ_UNIFORM | port: every verdict is that port */
	uint16_t fail_reason;      /**< status ERROR: why every packet is dropped (enum gnio_drop_reason) */
	uint64_t first_rx_tsc;     /**< TSC when the first packet of the item was received */
};

/**
 * Create a burst queue: an rte_gpu_comm_list of nb_items items whose status
 * words are moved to one 128-byte line each, plus verdict and port arrays;
 * all registered with the GPU once, here.
 * @return the queue, or NULL with rte_errno: EINVAL (bad conf), ENOMEM, ENODEV
 *   (no such GPU), or what gpudev reported.
 */
struct gnio_burstq *gnio_burstq_create(const struct gnio_burstq_conf *conf);

/**
 * Destroy a queue. Every item must have been released.
 * @return 0, -EBUSY when items are still in flight (nothing freed), -EINVAL on NULL.
 */
int gnio_burstq_destroy(struct gnio_burstq *q);

/** Packets the producer may add to the open item now (0: the next item is not FREE). */
uint32_t gnio_burstq_room(struct gnio_burstq *q);

/**
 * Describe up to @p n mbufs in the open item (chained mbufs included: the
 * descriptor gives the first segment, the item's segment table the others). @p tsc is when they were received.
 * Packets of one item share one RX port: a different port publishes first.
 * @return how many were added (less than n when the item filled or is not FREE).
 */
uint32_t gnio_burstq_add(struct gnio_burstq *q, struct rte_mbuf **mbufs, uint32_t n,
		uint16_t rx_port, uint64_t tsc);

/**
 * Zero-copy receive: where the next mbufs of the open item go. Call
 * rte_eth_rx_burst() straight into the returned array (at most *room mbufs),
 * then gnio_burstq_commit(). Packets of another port publish the open item first.
 * @return the slots, or NULL (room 0) when the next item is not FREE.
 */
struct rte_mbuf **gnio_burstq_slots(struct gnio_burstq *q, uint16_t rx_port, uint32_t *room);

/**
 * Describe the @p n mbufs just written at gnio_burstq_slots(); publishes the
 * item when it is full. @p tsc is when they were received; it is kept only
 * for an item's first packets (read when gnio_burstq_pending() is 0), so a
 * caller may pass anything for the later ones.
 */
void gnio_burstq_commit(struct gnio_burstq *q, uint32_t n, uint16_t rx_port, uint64_t tsc);

/** Packets in the open (not yet published) item. */
uint32_t gnio_burstq_pending(const struct gnio_burstq *q);

/** TSC of the first packet in the open item (valid when pending > 0). */
uint64_t gnio_burstq_pending_since(const struct gnio_burstq *q);

/**
 * Publish the open item: num_pkts, rte_gpu_wmb(), then READY (release).
 * @return 1 if an item was published, 0 when nothing was pending.
 */
int gnio_burstq_publish(struct gnio_burstq *q);

/** Take a look at the oldest published item. @return true when it is DONE or ERROR. */
bool gnio_burstq_peek_done(struct gnio_burstq *q, struct gnio_bq_done *done);

/**
 * Latency flavour: large buffers for the packets whose chain after the first
 * segment is more segments than a slot's table holds (GNIO_LQ_SEGS): their
 * bytes are copied there for the consumer to read (the packet sent is the one
 * received), and the copies go back to @p mp when the item is released. The
 * buffers must be as readable by the consumer as the packets'. Without one
 * (NULL), such a packet is not described: an engine that reads every byte
 * (csum) drops it as unverified. Control path, before the queue is used.
 */
void gnio_burstq_set_pack_pool(struct gnio_burstq *q, struct rte_mempool *mp);

/** Release the item seen by gnio_burstq_peek_done (its mbufs are the caller's now). */
void gnio_burstq_release(struct gnio_burstq *q);

/**
 * Mark every published item that is still READY as ERROR, once the consumer
 * will not complete them (it failed, or stopped at the drain bound); the
 * completion side then drops their packets for @p reason (enum
 * gnio_drop_reason). Call only when the consumer is stopped or dead.
 * @return number of items marked; @p pkts (if not NULL) gets their packets.
 */
uint32_t gnio_burstq_fail_ready(struct gnio_burstq *q, uint16_t reason, uint64_t *pkts);

/**
 * Sequence number of the next item to be published (items published so far).
 * A consumer starting after a stop (everything drained or failed) begins here.
 */
uint32_t gnio_burstq_published(const struct gnio_burstq *q);

/**
 * Latency flavour: sequence number of the next packet to be written into the
 * flagged lines (packets written so far). A consumer starting after a stop
 * begins here; at stop, what it must answer ends here.
 */
uint32_t gnio_burstq_lines_written(const struct gnio_burstq *q);

/**
 * Latency flavour: packets of failed items (gnio_burstq_fail_ready) that the
 * consumer had answered all the same (they were dropped), since creation.
 */
uint64_t gnio_burstq_lines_late(const struct gnio_burstq *q);

/** Items published and not yet released. */
uint32_t gnio_burstq_in_flight(const struct gnio_burstq *q);

/** Consumer view, in memory the consumer can read (GPU pointer equals CPU pointer). */
struct gnio_bq_dev *gnio_burstq_dev(struct gnio_burstq *q);

/** The gpudev device of the queue. */
int16_t gnio_burstq_gpu(const struct gnio_burstq *q);

#endif /* GNIO_BURSTQ_H */
