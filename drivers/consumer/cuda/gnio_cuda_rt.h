/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The CUDA runtime side of the CUDA consumers, as a pure C interface between
 * the consumers (DPDK side) and cuda_rt.cu (nvcc, host code only): no DPDK header here.
 * Not thread-safe: one control thread per gnio_cuda_rt.
 */
#ifndef GNIO_CUDA_RT_H
#define GNIO_CUDA_RT_H

#include <stddef.h>
#include <stdint.h>

#include "gnio_cuda_launch.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gnio_cuda_rt;

/** Bind to CUDA device @p ordinal, make a non-blocking stream. 0 or -EIO (err filled). */
int gnio_cuda_rt_create(int ordinal, struct gnio_cuda_rt **rt, char *err, size_t len);

/** Free the stream, graph and device memory. */
void gnio_cuda_rt_destroy(struct gnio_cuda_rt *rt);

/** SMs of the device, to size a resident grid. */
int gnio_cuda_rt_sms(const struct gnio_cuda_rt *rt);

/** Launch handler @p k's persistent kernel (returns at once). 0 or -EIO. */
int gnio_cuda_rt_persistent(struct gnio_cuda_rt *rt, const struct gnio_cuda_kernels *k,
		const struct gnio_cuda_launch *l, char *err, size_t len);

/** Launch a user kernel through its launcher (the cuda-kernel consumer). 0 or -EIO. */
int gnio_cuda_rt_user(struct gnio_cuda_rt *rt, int (*launch)(const struct gnio_cuda_launch *, void *),
		const struct gnio_cuda_launch *l, char *err, size_t len);

/** Items a user kernel released, all queues (after it ended). 0 or -EIO. */
int gnio_cuda_rt_user_items(struct gnio_cuda_rt *rt, uint32_t nb_qs, uint64_t *items);

/** cudaMemcpy on CUDA device @p ordinal, any direction (unified addressing). 0 or -EIO. */
int gnio_cuda_rt_copy(int ordinal, void *dst, const void *src, size_t n);

/** Launch @p k's kernel for one item (per-burst mode). 0 or -EIO. */
int gnio_cuda_rt_item(struct gnio_cuda_rt *rt, const struct gnio_cuda_kernels *k,
		const struct gnio_cuda_launch *l, uint32_t q, uint32_t seq, char *err, size_t len);

/** Capture the graph of @p k's sweep kernel (graph mode). 0 or -EIO. */
int gnio_cuda_rt_graph_prepare(struct gnio_cuda_rt *rt, const struct gnio_cuda_kernels *k,
		const struct gnio_cuda_launch *l, char *err, size_t len);

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

/**
 * Staged mode, at start: the handler's state as the staged kernel gets it in
 * @p dev: @p size bytes of @p state copied to device memory, or @p state
 * itself when @p size is 0 (state the GPU reaches already). 0 or -EIO.
 */
int gnio_cuda_rt_stage_state(struct gnio_cuda_rt *rt, const void *state, size_t size, void **dev,
		char *err, size_t len);

/** Host side of stage @p s: packet buffer and its size, descriptors [3 per packet], verdicts. */
void gnio_cuda_rt_stage_host(struct gnio_cuda_rt *rt, uint32_t s, uint8_t **buf, size_t *cap,
		uint32_t **desc, uint16_t **verd);

/**
 * Stage @p s: copy @p bytes of packets and @p nb descriptors to the device,
 * run handler @p k's staged kernel with @p state, copy packets and verdicts
 * back, record the stage's event. Returns at once. 0 or -EIO.
 */
int gnio_cuda_rt_stage_launch(struct gnio_cuda_rt *rt, const struct gnio_cuda_kernels *k,
		void *state, uint32_t s, uint32_t nb, size_t bytes, uint16_t rx_port, uint16_t tx_port,
		char *err, size_t len);

/**
 * Stage @p s, for a caller that queues its own work (cuda-batch): its device
 * buffer, its stream (a cudaStream_t) and the CUDA device's ordinal.
 */
void gnio_cuda_rt_stage_dev(struct gnio_cuda_rt *rt, uint32_t s, uint8_t **dbuf, void **stream,
		int *ordinal);

/**
 * Stage @p s: make its device current on the calling thread, then queue the
 * copy of @p bytes at @p off of its host buffer to its device buffer (none for 0).
 * 0 or -EIO.
 */
int gnio_cuda_rt_stage_to_dev(struct gnio_cuda_rt *rt, uint32_t s, size_t off, size_t bytes,
		char *err, size_t len);

/**
 * Stage @p s: queue the copy of @p bytes at @p off of its device buffer back
 * to its host buffer, then record the stage's event. 0 or -EIO.
 */
int gnio_cuda_rt_stage_to_host(struct gnio_cuda_rt *rt, uint32_t s, size_t off, size_t bytes,
		char *err, size_t len);

/**
 * cuda-batch (cc_gather.cu): queue on @p stream the copy of @p rows records of
 * @p row_bytes each, from the packet memory @p src (pinned: @p rows
 * addresses the GPU reaches) into @p dst (device memory), one after
 * another. 0 or -EIO.
 */
int gnio_cuda_rt_gather(const uint64_t *src, uint8_t *dst, uint32_t rows, uint32_t row_bytes, void *stream,
		char *err, size_t len);

/** Stage @p s: 0 finished, 1 still running, -EIO when it failed (err names the error). */
int gnio_cuda_rt_stage_query(struct gnio_cuda_rt *rt, uint32_t s, char *err, size_t len);

/** Kernel launches and graph replays so far. */
uint64_t gnio_cuda_rt_launches(const struct gnio_cuda_rt *rt);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_CUDA_RT_H */
