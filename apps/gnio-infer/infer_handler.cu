/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's handler where CUDA is: the same function (infer_mlp.h) on the
 * CPU and in every CUDA consumer's kernels (one request per lane, the weights
 * in the state, in GPU memory on a GPU).
 */
#include <gnio/device/gnio_kernels.cuh>

#include "infer_mlp.h"

struct infer_h {
	__host__ __device__ static uint16_t
	packet(struct gnio_pkt *pkt, void *state)
	{
		return infer_on_packet((const struct infer_state *)state, pkt);
	}
};

GNIO_CUDA_HANDLER(infer_handler, "infer", "gnio-infer: a digit classifier answering UDP requests",
		infer_h)
