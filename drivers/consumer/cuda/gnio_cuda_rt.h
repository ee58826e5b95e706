/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The CUDA runtime side of the CUDA consumers, as a pure C interface between
 * consumer_cuda.c (DPDK side) and kernels.cu (nvcc side): no DPDK header here.
 * Not thread-safe: one control thread per gnio_cuda_rt.
 */
#ifndef GNIO_CUDA_RT_H
#define GNIO_CUDA_RT_H

#include <stddef.h>
#include <stdint.h>

#include "gnio_eng_ctx.h"
#include "gnio_shm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Kernel inputs, passed by value. Every pointer is valid on the GPU (registered or device memory). */
struct gnio_cuda_launch {
	struct gnio_bq_dev *const *qs;     /**< [nb_qs] queue views (registered host memory) */
	uint32_t nb_qs;
	const struct gnio_eng_ctx *ctx;    /**< engine inputs (registered) */
	const uint32_t *quit;              /**< GNIO_QUIT_DRAIN / GNIO_QUIT_NOW to stop (registered) */
	const uint32_t *final;             /**< [nb_qs] items published at stop; valid once quit is 1 */
	const uint32_t *start;             /**< [nb_qs] first item to consume */
	uint32_t *cursor;                  /**< [nb_qs] graph mode: next item; GPU writes, CPU reads */
	unsigned int engine;               /**< enum gnio_engine_id */
	uint32_t warps_per_q;              /**< persistent mode: worker warps per queue (plus one
	                                        dispatcher warp) */
	void *sync;                        /**< persistent mode: per-queue dispatch words in device
	                                        memory (set by gnio_cuda_rt_persistent) */
	const struct gnio_comm_pkt *const *plist;   /**< persistent mode: descriptor array of item
	                                        k of queue q at [q * plist_stride + k], device
	                                        memory (set by gnio_cuda_rt_persistent) */
	uint32_t plist_stride;
	uint32_t *meta;                    /**< persistent mode: GNIO_BQ_META of item k of queue q
	                                        at [q * plist_stride + k], as its dispatcher read it
	                                        (device memory, set by gnio_cuda_rt_persistent) */
	uint32_t slow_ns;                  /**< fault injection: extra time per item */
	int inject_fault;                  /**< fault injection: write to an invalid address */
	uint32_t *fault_mark;              /**< fault injection: set to 1 (system scope) just before
	                                        the invalid write, so the CPU can time detection */
	uint64_t *heartbeat;               /**< persistent mode: queue q's dispatcher writes the GPU
	                                        time at [q * GNIO_CUDA_HEARTBEAT_STRIDE] every
	                                        millisecond (registered): a kernel that stopped (a
	                                        fault) is seen long before CUDA reports it */
	uint32_t *dbg;                     /**< NULL, or [2 per warp]: item waited for, status last read */
	uint32_t backoff_ns;               /**< persistent mode: longest sleep between polls */
	uint64_t *prof;                    /**< persistent mode: [GNIO_CUDA_PROF_WORDS per warp],
	                                        written by each warp at exit (registered) */
};

/**
 * Per-warp profile of the persistent kernel (words of gnio_cuda_launch.prof).
 * A worker warp: ns waiting for an item, ns working on items, items, and the
 * work split in three (ns until the item's first descriptors arrived; ns
 * until the engine's last result; ns until DONE was stored), and the items it
 * claimed but left READY because the CPU said GNIO_QUIT_NOW.
 * The dispatcher warp of a queue: polls, ns its polls took from load to
 * value (the round trip to host memory), items it dispatched.
 */
enum gnio_cuda_prof {
	GNIO_CUDA_PROF_WAIT_NS,
	GNIO_CUDA_PROF_WORK_NS,
	GNIO_CUDA_PROF_ITEMS,
	GNIO_CUDA_PROF_FETCH_NS,
	GNIO_CUDA_PROF_ENGINE_NS,
	GNIO_CUDA_PROF_PUBLISH_NS,
	GNIO_CUDA_PROF_SKIPPED,      /* items claimed and left READY (GNIO_QUIT_NOW) */
	GNIO_CUDA_PROF_WORDS,
	/* Dispatcher warps reuse the first words. */
	GNIO_CUDA_PROF_POLLS = GNIO_CUDA_PROF_WAIT_NS,
	GNIO_CUDA_PROF_POLL_NS = GNIO_CUDA_PROF_WORK_NS,
	GNIO_CUDA_PROF_DISPATCHED = GNIO_CUDA_PROF_ITEMS,
};

/** Heartbeat words apart (one 64-byte line each). */
#define GNIO_CUDA_HEARTBEAT_STRIDE 8

struct gnio_cuda_rt;

/** Bind to CUDA device @p ordinal, make a non-blocking stream. 0 or -EIO (err filled). */
int gnio_cuda_rt_create(int ordinal, struct gnio_cuda_rt **rt, char *err, size_t len);

/** Free the stream, graph and device memory. */
void gnio_cuda_rt_destroy(struct gnio_cuda_rt *rt);

/** SMs of the device, to size a resident grid. */
int gnio_cuda_rt_sms(const struct gnio_cuda_rt *rt);

/** Launch the persistent kernel (returns at once). 0 or -EIO. */
int gnio_cuda_rt_persistent(struct gnio_cuda_rt *rt, const struct gnio_cuda_launch *l, char *err,
		size_t len);

/** Launch one kernel for one item (per-burst mode). 0 or -EIO. */
int gnio_cuda_rt_item(struct gnio_cuda_rt *rt, const struct gnio_cuda_launch *l, uint32_t q,
		uint32_t seq, char *err, size_t len);

/** Capture the graph of the sweep kernel (graph mode). 0 or -EIO. */
int gnio_cuda_rt_graph_prepare(struct gnio_cuda_rt *rt, const struct gnio_cuda_launch *l, char *err,
		size_t len);

/** Replay the captured graph. 0 or -EIO. */
int gnio_cuda_rt_graph_launch(struct gnio_cuda_rt *rt, char *err, size_t len);

/**
 * State of the stream: 0 idle (all work finished), 1 busy, -EIO when a kernel
 * failed (err names the CUDA error).
 */
int gnio_cuda_rt_query(struct gnio_cuda_rt *rt, char *err, size_t len);

/**
 * Staged mode (the traditional copy path): @p nb_stages sets of a pinned host
 * buffer and a device buffer of @p cap bytes, descriptors and verdicts for
 * @p max_pkts packets, each with its own stream. 0 or -errno (err filled).
 */
int gnio_cuda_rt_stage_create(struct gnio_cuda_rt *rt, uint32_t nb_stages, uint32_t max_pkts,
		size_t cap, char *err, size_t len);

/** Staged mode: copy the engine inputs to device memory (at start). 0 or -EIO. */
int gnio_cuda_rt_stage_ctx(struct gnio_cuda_rt *rt, const struct gnio_eng_ctx *ctx, char *err,
		size_t len);

/** Host side of stage @p s: packet buffer and its size, descriptors [3 per packet], verdicts. */
void gnio_cuda_rt_stage_host(struct gnio_cuda_rt *rt, uint32_t s, uint8_t **buf, size_t *cap,
		uint32_t **desc, uint16_t **verd);

/**
 * Stage @p s: copy @p bytes of packets and @p nb descriptors to the device,
 * run the engine, copy packets and verdicts back, record the stage's event.
 * Returns at once. 0 or -EIO.
 */
int gnio_cuda_rt_stage_launch(struct gnio_cuda_rt *rt, const struct gnio_cuda_launch *l,
		uint32_t s, uint32_t nb, size_t bytes, uint16_t rx_port, char *err, size_t len);

/** Stage @p s: 0 finished, 1 still running, -EIO when it failed (err names the error). */
int gnio_cuda_rt_stage_query(struct gnio_cuda_rt *rt, uint32_t s, char *err, size_t len);

/** Kernel launches and graph replays so far. */
uint64_t gnio_cuda_rt_launches(const struct gnio_cuda_rt *rt);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_CUDA_RT_H */
