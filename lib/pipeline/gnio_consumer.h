/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Consumer ops: what runs the engines on published burst-queue items. One ops
 * table per consumer (host worker, CUDA persistent kernel, per-burst launches,
 * CUDA graphs); NULL ops are unsupported. Consumers register themselves with
 * GNIO_CONSUMER_REGISTER.
 *
 * Thread safety: create, start, stop, destroy and stats from the control
 * (main) lcore; step from the one lcore the pipeline assigns (host consumer);
 * poll from the control lcore while running.
 */
#ifndef GNIO_CONSUMER_H
#define GNIO_CONSUMER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_gpudev.h>

#include "gnio_burstq.h"
#include "gnio_eng_ctx.h"
#include "gnio_engine.h"

struct gnio_consumer;

/** Counters of a consumer. */
struct gnio_consumer_stats {
	uint64_t items;       /**< items completed */
	uint64_t pkts;        /**< packets the engine ran on */
	uint64_t launches;    /**< kernel launches or graph replays (GPU consumers) */
	/* Persistent kernel, after it ended: summed over its warps (0 otherwise). */
	uint64_t wait_ns;     /**< time warps spent waiting for READY */
	uint64_t work_ns;     /**< time warps spent running engines on items */
	/* work_ns in phases: */
	uint64_t fetch_ns;    /**< until an item's first descriptors arrived */
	uint64_t engine_ns;   /**< then until the engine's last result */
	uint64_t publish_ns;  /**< then until DONE was stored (the system fence) */
	/* The dispatchers (one per queue): */
	uint64_t polls;       /**< loads of a status word in host memory */
	uint64_t poll_ns;     /**< time those loads took, from issue to value */
	uint64_t dispatched;  /**< items they saw READY and handed to workers */
	uint64_t skipped;     /**< items handed out that workers left READY (stopped at the drain bound) */
	uint32_t warps;       /**< worker warps of the kernel */
	uint64_t fault_mark_tsc; /**< --inject-fault: TSC when the kernel's "about to fault" mark was
	                          first seen by poll (0: not seen) */
	uint64_t stopped_tsc; /**< TSC when poll found the persistent kernel stopped (its
	                          dispatchers' heartbeat lost), before CUDA named the error; 0: not */
};

/** Consumer ops. */
struct gnio_consumer_ops {
	const char *name;                                   /**< --consumer value */
	const char *help;
	bool gpu;                                           /**< runs on the GPU: needs registered memory */
	bool copies;                                        /**< copies packets to the GPU itself: any --mem */
	/** Allocate per-consumer state (GPU memory, streams). 0 or -errno. */
	int (*create)(struct gnio_consumer *c);
	/** Begin consuming (launch the kernel, or arm the host loop). 0 or -errno. */
	int (*start)(struct gnio_consumer *c);
	/** Host consumers: one pass over the queues, from the assigned lcore. Items done. */
	unsigned int (*step)(struct gnio_consumer *c);
	/**
	 * Stop once every published item is DONE (the producers must be stopped
	 * first), waiting at most c->drain_ms for that. 0: all done. -ETIMEDOUT:
	 * the bound passed; the consumer then took no more items and is idle, and
	 * the items still READY were not run (the pipeline drops them). -EIO: a
	 * GPU fault, or it could not be made to stop (c->error says which).
	 */
	int (*stop)(struct gnio_consumer *c);
	/** Health while running: 0, -EIO (fault, see c->error) or -ETIMEDOUT (stalled). */
	int (*poll)(struct gnio_consumer *c);
	/** Read counters. */
	void (*stats)(struct gnio_consumer *c, struct gnio_consumer_stats *st);
	/** Free what create allocated. */
	void (*destroy)(struct gnio_consumer *c);
};

/** A consumer instance. The pipeline fills the inputs before create. */
struct gnio_consumer {
	const struct gnio_consumer_ops *ops;
	/* Inputs. */
	struct gnio_burstq **qs;          /**< queues to consume */
	uint32_t nb_qs;
	int16_t gpu_id;                   /**< gpudev device */
	const struct gnio_engine *engine;
	struct gnio_eng_ctx *ctx;         /**< registered with the GPU */
	uint32_t stall_ms;                /**< watchdog: no progress this long while items wait */
	uint32_t drain_ms;                /**< stop: longest wait for the published items */
	uint32_t slow_us;                 /**< fault injection: extra time spent per item */
	bool inject_fault;                /**< fault injection: GPU consumers fault on purpose */
	/* Quit flag (CPU writes, consumer polls) for every spin loop. */
	struct rte_gpu_comm_flag quit;
	/* Consumer-private state and the last error text. */
	void *priv;
	char error[160];
};

/** Register a consumer's ops (at load time). */
void gnio_consumer_register(const struct gnio_consumer_ops *ops);

#define GNIO_CONSUMER_REGISTER(ops) \
	RTE_INIT(gnio_consumer_register_ ## ops) { gnio_consumer_register(&ops); }

/**
 * Find consumer ops by name.
 * @return ops, or NULL with rte_errno ENOENT (unknown or not built) / EINVAL (NULL).
 */
const struct gnio_consumer_ops *gnio_consumer_find(const char *name);

/** Names of the registered consumers, '|'-separated, in a static buffer. */
const char *gnio_consumer_names(void);

#endif /* GNIO_CONSUMER_H */
