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
#include "gnio_handler.h"
#include "gnio_pipeline.h"

struct gnio_consumer;

/** Consumer ops. */
struct gnio_consumer_ops {
	const char *name;                                   /**< --consumer value */
	const char *help;
	bool gpu;                                           /**< runs on the GPU: needs registered memory */
	bool copies;                                        /**< copies packets to the GPU itself: any --mem */
	bool host_state;                                    /**< runs the handler's CPU code: its
	                                                         state is host memory, on a GPU too */
	bool lines;                                         /**< serves the latency flavour of the burst
	                                                         queue (gnio_conf.queue.inline_bytes) */
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
	const struct gnio_handler *handler;   /**< what runs on every packet */
	void *state;                      /**< its state: the engine context (registered with the
	                                       GPU) for a built-in, else the application's */
	const uint16_t *fwd;              /**< [GNIO_MAX_PORTS] the port paired with each port
	                                       (registered with the GPU) */
	const char *kernel;               /**< consumer cuda-kernel: the user kernel's name */
	uint32_t cuda_warps;              /**< persistent kernel: worker warps per queue (0: default) */
	uint32_t state_shared;            /**< CUDA kernels: state bytes kept in shared memory */
	uint32_t cuda_backoff_ns;         /**< persistent kernel: a dispatcher's longest sleep */
	bool cuda_trace;                  /**< persistent kernel: warps say what they wait for */
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

/** Register a consumer's ops (once; later calls with the same ops do nothing). */
void gnio_consumer_register(const struct gnio_consumer_ops *ops);

/**
 * Register the CUDA consumers in a CUDA build (the host consumer registers
 * itself from its constructor). Called by gnio_pipeline_create() and the name
 * functions.
 */
void gnio_consumers_init(void);

/** The CUDA consumers' registration (drivers/consumer/cuda). */
void gnio_consumer_cuda_init(void);

/**
 * Find consumer ops by name.
 * @return ops, or NULL with rte_errno ENOENT (unknown or not built) / EINVAL (NULL).
 */
const struct gnio_consumer_ops *gnio_consumer_find(const char *name);



/* The host consumer, before it runs a handler on an item: gnio_handler_rx_tsc() until the next. */
void gnio_consumer_rx_tsc_set(uint64_t tsc);

#endif /* GNIO_CONSUMER_H */
