/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The gnio pipeline: ports and queues, lcore and NUMA placement, memory pools,
 * burst queues, the consumer, and the RX / completion lcores; start, stop with
 * drain, statistics, latency histogram, telemetry (/gnio/...).
 *
 * Thread safety: every function here is for the control (main) lcore. The
 * statistics getters may run while forwarding (they read counters that each
 * lcore alone writes); telemetry handlers run on DPDK's telemetry thread and
 * use the same getters.
 */
#ifndef GNIO_PIPELINE_H
#define GNIO_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "gnio_config.h"
#include "gnio_engine.h"
#include "gnio_hist.h"
#include "gnio_mem.h"
#include "gnio_verdict.h"

/** What the RX lcore does when the next burst-queue item is not FREE. */
enum gnio_overload {
	GNIO_OVERLOAD_DROP,          /**< receive and drop, counted as ring_full */
	GNIO_OVERLOAD_BACKPRESSURE,  /**< stop polling; the NIC counts imissed */
};

/** Which lcores run the completion path (verdicts, transmit, free). */
enum gnio_completion {
	GNIO_COMPLETION_AUTO,        /**< a dedicated lcore when one is spare, else the RX lcores */
	GNIO_COMPLETION_RX,          /**< each RX lcore completes its own queues (mbufs stay in its cache) */
	GNIO_COMPLETION_LCORE,       /**< one dedicated lcore for every queue (fails if none is spare) */
};

/** Pipeline configuration (see gnio_pipeline_conf_defaults). */
struct gnio_pipeline_conf {
	uint16_t nb_ports;
	uint16_t ports[GNIO_MAX_PORTS];      /**< ethdev ids, each < GNIO_MAX_PORTS */
	uint16_t nb_rxq;                     /**< RX queues per port (RSS when > 1) */
	uint16_t nb_txq;                     /**< TX queues per port (at least one per completion lcore) */
	uint16_t nb_rxd;
	uint16_t nb_txd;
	uint16_t burst;                      /**< packets per rx_burst (<= 1024) */
	uint16_t item_pkts;                  /**< packets per burst-queue item, >= burst (<= 1024); 0: 4 x burst */
	uint32_t nb_mbufs;                   /**< 0: enough for rings, descriptors and caches */
	uint16_t mbuf_size;                  /**< data room per mbuf, headroom included */
	enum gnio_mem_mode mem;
	uint16_t split_hdr;                  /**< header/data split at this offset; 0 = off */
	int16_t gpu_id;                      /**< gpudev device of the consumer (ports not mapped) */
	int16_t port_gpu[GNIO_MAX_PORTS];    /**< GPU of each port id, where port_gpu_set */
	bool port_gpu_set[GNIO_MAX_PORTS];   /**< several GPUs: one consumer per GPU */
	const char *consumer;                /**< consumer ops name */
	const struct gnio_engine *engine;
	uint32_t flush_us;                   /**< publish a partial item after this long; 0: when rx_burst comes back short */
	uint32_t ring_items;                 /**< burst-queue items per RX queue (power of 2) */
	enum gnio_overload overload;
	uint64_t max_packets;                /**< stop receiving after this many; 0 = no limit */
	uint16_t nb_cores;                   /**< RX lcores */
	enum gnio_completion completion;     /**< where completion runs */
	uint64_t rx_pps;                     /**< receive at most this many packets/s in all (paced,
	                                          spread evenly over the RX queues); 0 = as fast as they come */
	uint16_t prefill_len;                /**< 0, or write an Ethernet/IPv4/UDP packet of this many
	                                          bytes with valid checksums into every mbuf at start
	                                          (models a NIC writing real packets at no CPU cost with
	                                          net_null copy=0); host and pinned memory only */
	uint16_t txpkts;                     /**< txonly packet length */
	uint32_t stall_ms;                   /**< consumer watchdog */
	uint32_t drain_ms;                   /**< stop: longest wait for the consumer to complete what
	                                          was published (then the rest is dropped as
	                                          drain_timeout); default 5000 */
	uint32_t slow_consumer_us;           /**< fault injection: consumer waits this long per item */
	bool inject_fault;                   /**< fault injection: a GPU consumer faults on purpose */
	bool peer_set[GNIO_MAX_PORTS];
	struct rte_ether_addr peer[GNIO_MAX_PORTS];   /**< --eth-peer */
};

/** Counters of one port (or of the whole pipeline). */
struct gnio_counts {
	uint64_t rx;                          /**< received */
	uint64_t generated;                   /**< made by a generating engine (txonly), not received */
	uint64_t tx;                          /**< accepted by tx_burst */
	uint64_t drops[GNIO_DROP_MAX];        /**< by reason */
};

/** Most GPUs (consumers) one pipeline drives, and pools a snapshot lists. */
#define GNIO_STATS_MAX_GPUS 8
#define GNIO_STATS_MAX_POOLS 16

/** One mempool's level in a snapshot: avail + in_use == size. */
struct gnio_pool_level {
	char name[32];                        /**< mempool name */
	uint32_t size;                        /**< mbufs it holds */
	uint32_t avail;                       /**< in the pool and its caches */
	uint32_t in_use;                      /**< size - avail: out in rings, items, NIC queues */
	uint32_t at_start;                    /**< avail after the ports started */
};

/** One GPU's consumer in a snapshot. */
struct gnio_gpu_counts {
	int16_t gpu_id;                       /**< gpudev device */
	uint16_t nb_ports;                    /**< ports bound to it */
	uint64_t processed;                   /**< packets its consumer ran the engine on */
};

/** A consistent statistics snapshot (gnio_pipeline_stats()). */
struct gnio_stats {
	uint64_t tsc;                         /**< TSC when it was taken */
	bool running;                         /**< forwarding at that time */
	struct gnio_counts total;             /**< over all ports */
	uint64_t dropped;                     /**< sum of total.drops */
	uint64_t processed;                   /**< sum of gpu[].processed */
	uint64_t in_flight;                   /**< rx + generated - tx - dropped: inside the pipeline */
	uint64_t rx_cycles;                   /**< busy TSC cycles of RX work, summed over lcores */
	uint64_t comp_cycles;                 /**< busy TSC cycles of completion work */
	uint64_t first_rx_tsc;                /**< TSC of the first packet received since start, 0: none */
	uint32_t prefill_short_len;           /**< 0, or the length of a packet shorter than
	                                           conf.prefill_len (the port does not deliver
	                                           the prefilled packets whole) ... */
	uint16_t prefill_short_port;          /**< ... and the port it came from */
	uint16_t nb_ports;                    /**< ports of the pipeline */
	uint16_t nb_gpus;                     /**< entries of gpu[] */
	uint16_t nb_pools;                    /**< entries of pool[] */
	struct gnio_gpu_counts gpu[GNIO_STATS_MAX_GPUS];
	struct gnio_pool_level pool[GNIO_STATS_MAX_POOLS];
};

/** Result of the end-of-run checks. */
struct gnio_check {
	struct gnio_counts total;
	uint64_t dropped;                     /**< sum of drops */
	bool conserved;                       /**< rx + generated == tx + dropped */
	uint64_t in_flight;                   /**< items still published (0 after stop) */
	unsigned int nb_pools;
	struct gnio_pool_level pool[GNIO_STATS_MAX_POOLS];
	bool pools_full;                      /**< every pool back to its starting level */
	/**
	 * Every consumer that counts the items it ran (the persistent kernel, after
	 * it ended) ran as many as completion saw DONE since start: none twice, none
	 * lost; and its dispatchers, if any, handed out as many. Else the first
	 * GPU index that differs and the counts.
	 */
	bool items_consistent;
	uint16_t items_gpu;
	uint64_t items_consumer;
	uint64_t items_dispatched;
	uint64_t items_completed;
};

struct gnio_pipeline;

/** Fill @p c with testpmd's defaults (burst 32, 1024 descriptors, io engine, ...). */
void gnio_pipeline_conf_defaults(struct gnio_pipeline_conf *c);

/**
 * Configure and start the ports, create pools, burst queues and the consumer,
 * and place lcores. Forwarding does not start yet.
 * @param err filled with a one-line reason on failure (names the port or option).
 * @return the pipeline, or NULL with rte_errno: EINVAL (bad configuration),
 *   ENOTSUP (a port cannot do what the mode needs), ENOENT (unknown consumer),
 *   ENOMEM, ENODEV, or the error of a DPDK call.
 */
struct gnio_pipeline *gnio_pipeline_create(const struct gnio_pipeline_conf *c, char *err,
		size_t err_len);

/** Notes about placement and the data path (NUMA hops, why not gpudirect): count. */
unsigned int gnio_pipeline_nb_notes(const struct gnio_pipeline *p);
/** Note @p i. */
const char *gnio_pipeline_note(const struct gnio_pipeline *p, unsigned int i);
/** Data path in effect for port index @p i, and why. */
const char *gnio_pipeline_datapath(const struct gnio_pipeline *p, uint16_t i);

/** Append @p text (e.g. the PCIe distance to the GPU) to port index @p i's data path. */
void gnio_pipeline_annotate_port(struct gnio_pipeline *p, uint16_t i, const char *text);

/**
 * Start forwarding: the consumer, then the completion and RX lcores.
 * @return 0, -EALREADY, -EBUSY (an lcore is busy), or the consumer's error.
 */
int gnio_pipeline_start(struct gnio_pipeline *p);

/**
 * Stop forwarding and drain: RX lcores publish what they hold and stop, each
 * consumer completes every published item (waiting at most conf.drain_ms),
 * the completion lcores transmit or free everything. Received = transmitted
 * + dropped holds in every case, and every mbuf is back in its pool.
 * @return 0; -EALREADY when not running; -ETIMEDOUT when the drain bound
 *   passed: the consumer stopped taking items and what it had not run was
 *   dropped as drain_timeout (gnio_pipeline_drain_abandoned() says how much);
 *   -EIO when a consumer failed (fault, stall, or it could not be stopped):
 *   what it had not run was dropped as consumer_error (gnio_pipeline_error()).
 */
int gnio_pipeline_stop(struct gnio_pipeline *p);

/** Packets the last gnio_pipeline_stop() dropped as drain_timeout. */
uint64_t gnio_pipeline_drain_abandoned(const struct gnio_pipeline *p);

/** True while forwarding. */
bool gnio_pipeline_running(const struct gnio_pipeline *p);

/**
 * Check health while running.
 * @return 0, 1 when --max-packets were received, -EIO / -ETIMEDOUT when the
 *   consumer faulted or stalled (gnio_pipeline_error says how).
 */
int gnio_pipeline_poll(struct gnio_pipeline *p);

/** Last error text of the consumer, "" if none. */
const char *gnio_pipeline_error(const struct gnio_pipeline *p);

/**
 * Stop port index @p i, also while forwarding: RX lcores stop polling it, verdicts
 * naming it are dropped as no_route, and once every lcore has passed a quiescent
 * point (none is inside rx_burst or tx_burst on it) the ethdev port is stopped.
 * @return 0, -EALREADY, -EINVAL (no such port), or the ethdev error.
 */
int gnio_pipeline_port_stop(struct gnio_pipeline *p, uint16_t i);

/** Start port index @p i again. @return 0, -EALREADY, -EINVAL, or the ethdev error. */
int gnio_pipeline_port_start(struct gnio_pipeline *p, uint16_t i);

/** Ports of the pipeline that are not stopped (gnio_pipeline_port_stop). */
uint16_t gnio_pipeline_nb_ports_up(const struct gnio_pipeline *p);

/** Change the engine while stopped. @return 0, -EBUSY while running, -EINVAL. */
int gnio_pipeline_set_engine(struct gnio_pipeline *p, const struct gnio_engine *e);

/** The configuration in effect. */
const struct gnio_pipeline_conf *gnio_pipeline_get_conf(const struct gnio_pipeline *p);

/**
 * Take a consistent snapshot of every counter, while forwarding too (any
 * thread). Counters of what happens after reception (tx, drops, processed)
 * are read before rx and generated, each lcore's counters with acquire order,
 * so a snapshot never shows a packet transmitted, dropped or processed that
 * it does not show received: processed <= rx + generated, tx + dropped <=
 * rx + generated, and each pool's avail + in_use == size.
 * @param ports NULL, or @p nb_ports entries: the counts of the pipeline's
 *   ports in the order of gnio_pipeline_conf.ports (fewer when it has fewer).
 * @return 0, or -EINVAL when @p p or @p st is NULL.
 */
int gnio_pipeline_stats(const struct gnio_pipeline *p, struct gnio_stats *st,
		struct gnio_counts *ports, uint16_t nb_ports);

/** GPUs in use: one consumer each. */
uint16_t gnio_pipeline_nb_gpus(const struct gnio_pipeline *p);

struct gnio_consumer_stats;

/** Counters of the consumer of GPU index @p g (see gnio_consumer.h). 0 or -EINVAL. */
int gnio_pipeline_consumer_stats(const struct gnio_pipeline *p, uint16_t g,
		struct gnio_consumer_stats *st);

/** Latency histogram (TSC cycles) from rx_burst return to completion seen, all lcores. */
void gnio_pipeline_latency(const struct gnio_pipeline *p, struct gnio_hist *h);

/** Reset counters and histograms (while stopped). */
void gnio_pipeline_reset_stats(struct gnio_pipeline *p);

/** Conservation and mempool checks (meaningful when stopped). */
void gnio_pipeline_check(const struct gnio_pipeline *p, struct gnio_check *chk);

/** Counter name of a drop reason. */
const char *gnio_drop_name(unsigned int reason);

/**
 * Stop the ports, free what create made.
 * @return 0, or -EBUSY when forwarding (stop first).
 */
int gnio_pipeline_destroy(struct gnio_pipeline *p);

#endif /* GNIO_PIPELINE_H */
