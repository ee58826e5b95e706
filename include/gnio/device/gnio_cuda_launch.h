/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What libgnio's CUDA consumers give a handler's kernels, and the table of
 * those kernels' launchers that <gnio/device/gnio_kernels.cuh> makes for each
 * handler (in the handler's own .cu file, where they are instantiated). Pure
 * C header, shared by libgnio's host code and the handler's nvcc code; no
 * DPDK and no CUDA header. An application does not fill these: the consumers
 * do.
 */
#ifndef GNIO_CUDA_LAUNCH_H
#define GNIO_CUDA_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "gnio_shm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Kernel inputs, passed by value. Every pointer is valid on the GPU (registered or device memory). */
struct gnio_cuda_launch {
	struct gnio_bq_dev *const *qs;     /**< [nb_qs] queue views (registered host memory) */
	uint32_t nb_qs;                    /**< queues this consumer serves */
	void *state;                       /**< the handler's state (GPU-reachable) */
	uint32_t state_shared;             /**< bytes of state the kernel copies to shared memory
	                                        first (the handler's choice; 0: none) */
	const uint16_t *fwd;               /**< the port paired with each port (gnio_pkt.tx_port) */
	uint32_t nb_fwd;                   /**< entries of fwd */
	const uint32_t *quit;              /**< GNIO_QUIT_DRAIN / GNIO_QUIT_NOW to stop (registered) */
	const uint32_t *final;             /**< [nb_qs] items published at stop; valid once quit is set */
	const uint32_t *start;             /**< [nb_qs] first item to consume */
	uint32_t *cursor;                  /**< [nb_qs] graph mode: next item; GPU writes, CPU reads */
	uint32_t warps_per_q;              /**< persistent mode: worker warps per queue (plus one
	                                        dispatcher warp) */
	void *sync;                        /**< persistent mode: per-queue dispatch words in device
	                                        memory */
	const struct gnio_comm_pkt *const *plist;   /**< persistent mode: descriptor array of item
	                                        k of queue q at [q * plist_stride + k] (device memory) */
	uint32_t plist_stride;             /**< entries of plist per queue (its ring's items) */
	uint32_t *meta;                    /**< persistent mode: GNIO_BQ_META of item k of queue q
	                                        at [q * plist_stride + k], as its dispatcher read it */
	uint32_t slow_ns;                  /**< fault injection: extra time per item */
	int inject_fault;                  /**< fault injection: write to an invalid address */
	uint32_t *fault_mark;              /**< fault injection: set to 1 (system scope) just before
	                                        the invalid write, so the CPU can time detection */
	uint64_t *heartbeat;               /**< persistent mode: queue q's dispatcher writes the GPU
	                                        time at [q * GNIO_CUDA_HEARTBEAT_STRIDE] every
	                                        millisecond: a kernel that stopped (a fault) is
	                                        seen long before CUDA reports it */
	uint32_t *dbg;                     /**< NULL, or [2 per warp]: item waited for, status last read */
	uint32_t backoff_ns;               /**< persistent mode: a dispatcher's longest sleep */
	uint64_t *prof;                    /**< persistent mode: [GNIO_CUDA_PROF_WORDS per warp],
	                                        written by each warp at exit (registered) */
};

/** Heartbeat words apart (one 64-byte line each). */
#define GNIO_CUDA_HEARTBEAT_STRIDE 8

/**
 * Per-warp profile of the persistent kernel (words of gnio_cuda_launch.prof).
 * A worker warp: ns waiting for an item, ns working on items, items, the work
 * split in three (until the item's first descriptors arrived; until the
 * handler's last result; until DONE was stored), and the items it claimed but
 * left READY because the CPU said GNIO_QUIT_NOW. The dispatcher warp of a
 * queue: polls, ns they took from load to value, items dispatched.
 */
enum gnio_cuda_prof {
	GNIO_CUDA_PROF_WAIT_NS,
	GNIO_CUDA_PROF_WORK_NS,
	GNIO_CUDA_PROF_ITEMS,
	GNIO_CUDA_PROF_FETCH_NS,
	GNIO_CUDA_PROF_ENGINE_NS,
	GNIO_CUDA_PROF_PUBLISH_NS,
	GNIO_CUDA_PROF_SKIPPED,
	GNIO_CUDA_PROF_WORDS,
	/* Dispatcher warps reuse the first words. */
	GNIO_CUDA_PROF_POLLS = GNIO_CUDA_PROF_WAIT_NS,
	GNIO_CUDA_PROF_POLL_NS = GNIO_CUDA_PROF_WORK_NS,
	GNIO_CUDA_PROF_DISPATCHED = GNIO_CUDA_PROF_ITEMS,
};

/** Threads per block of the persistent kernel (gnio_cuda_kernels.persistent). */
#define GNIO_CUDA_PERSISTENT_THREADS 128

/**
 * A handler's kernels, launched on @p stream (a cudaStream_t). Each returns
 * the CUDA error of its launch (cudaGetLastError(): 0 is cudaSuccess).
 */
struct gnio_cuda_kernels {
	/** The persistent kernel: @p blocks of GNIO_CUDA_PERSISTENT_THREADS threads. */
	int (*persistent)(const struct gnio_cuda_launch *l, unsigned int blocks, void *stream);
	/** One item of queue @p q (per-burst mode): one warp. */
	int (*item)(const struct gnio_cuda_launch *l, uint32_t q, uint32_t seq, void *stream);
	/** The READY items of every queue, a ring at most (graph mode, captured once). */
	int (*sweep)(const struct gnio_cuda_launch *l, void *stream);
	/**
	 * Staged mode: @p nb packets copied to device memory at @p buf, packet i at
	 * desc[3i], its first segment desc[3i+1] bytes, the whole desc[3i+2]; a
	 * verdict each into @p verd.
	 */
	int (*staged)(void *state, uint8_t *buf, const uint32_t *desc, uint16_t *verd, uint32_t nb,
			uint16_t rx_port, uint16_t tx_port, void *stream);
	/**
	 * The flagged-line kernel (queues of the latency flavour, gnio_line.h):
	 * @p blocks of GNIO_CUDA_PERSISTENT_THREADS threads, warps_per_q + 1 warps per queue.
	 */
	int (*lines)(const struct gnio_cuda_launch *l, unsigned int blocks, void *stream);
};

#ifdef __cplusplus
}
#endif

#endif /* GNIO_CUDA_LAUNCH_H */
