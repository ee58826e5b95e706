/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-trader's model on the GPU, as the host calls it (lstm_gpu.cu; the
 * device code is lstm_gpu.cuh). A request is one window of K rows; one
 * cluster of thread blocks takes the requests one after another with the
 * weights in its registers, loaded once. README.md ("The model on the GPU")
 * says how the work is split and what bounds a request's time.
 * Not thread-safe: one caller per struct tr_gpu.
 */
#ifndef GNIO_TRADER_LSTM_GPU_H
#define GNIO_TRADER_LSTM_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tr_gpu;

/* How a model's request is laid out on the GPU (what tr_gpu_open() chose). */
struct tr_gpu_info {
	uint32_t blocks;         /* thread blocks of the cluster that takes a request */
	uint32_t threads;        /* threads a block */
	uint32_t regs;           /* registers a thread (the compiler's) */
	uint32_t local_bytes;    /* local memory a thread (registers spilled: 0 is the design) */
	uint32_t smem_bytes;     /* shared memory a block */
	uint32_t clock_khz;      /* the GPU's SM clock (cycles to time) */
	char name[64];           /* the GPU */
};

/*
 * Copy model @p m (hidden 32, 128 or 256) to the first GPU. 0 and @p *out;
 * -ENODEV: no CUDA GPU; -ENOTSUP: a hidden size the GPU code is not built
 * for, or a cluster the GPU cannot run; -EIO: a CUDA error. What went wrong
 * in one line in @p err.
 */
int tr_gpu_open(const struct tr_lstm *m, struct tr_gpu **out, struct tr_gpu_info *info, char *err,
		size_t errlen);

/*
 * The logits of @p n windows @p win ([n][K][TR_F], host memory) into @p out
 * ([n][TR_OUT]), and each request's time inside the kernel in SM cycles into
 * @p cycles ([n]): from the first load of its rows to its logits written.
 * 0, or -EIO (the reason in @p err).
 */
int tr_gpu_run(struct tr_gpu *g, const float *win, uint32_t n, float *out, uint64_t *cycles,
		char *err, size_t errlen);

/*
 * The feature rows of @p n BBOs @p now on the GPU (tr_row()), each with the
 * stock's previous BBO @p prev[i] where @p has_prev[i], into @p rows
 * ([n][TR_F]). 0, or -EIO.
 */
int tr_gpu_rows(struct tr_gpu *g, const struct tr_bbo *now, const struct tr_bbo *prev,
		const uint8_t *has_prev, uint32_t n, float *rows, char *err, size_t errlen);

void tr_gpu_close(struct tr_gpu *g);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_TRADER_LSTM_GPU_H */
