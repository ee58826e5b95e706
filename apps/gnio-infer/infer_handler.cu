/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's handler where CUDA is: the same function (infer_mlp.h) on the
 * CPU and in every CUDA consumer's kernels (one request per lane, the weights
 * in the state, in GPU memory on a GPU).
 */
#include <gnio/device/gnio_kernels.cuh>

#include "infer_mlp.h"

/*
 * A warp with this many requests or fewer runs them one after another with
 * all its lanes (lane j the hidden unit j, lanes 0-9 the scores): about a
 * microsecond each; with more, each lane runs its own (all at once, a few
 * microseconds). The flagged lines give a warp one request.
 */
#define INFER_WARP_MAX 2

struct infer_h {
	__host__ __device__ static uint16_t
	packet(struct gnio_pkt *pkt, void *state)
	{
		return infer_on_packet((const struct infer_state *)state, pkt);
	}

	/* Each unit sums in the order infer_mlp_run() does: the same scores to the bit. */
	__device__ static uint16_t
	packet_warp(struct gnio_pkt *pkt, bool valid, void *state, unsigned int lane)
	{
		const struct infer_state *st = (const struct infer_state *)state;
		unsigned int todo = __ballot_sync(0xffffffffu, valid);
		uint16_t mine = 0;

		if (__popc(todo) > INFER_WARP_MAX)
			return valid ? infer_on_packet(st, pkt) : 0;
		while (todo != 0) {
			unsigned int src = (unsigned int)__ffs(todo) - 1;
			struct infer_local l;
			struct gnio_pkt lp;
			uint32_t pw[INFER_IN / 4], l3 = 0, ihl = 0;
			uint16_t v = 0;
			float h, s = 0.0f, score[INFER_OUT];

			todo &= todo - 1;
			if (lane == src) {
				infer_local_load(pkt, &l, &lp);
				v = infer_request_px(st, &lp, &l3, &ihl, (uint8_t *)pw);
			}
			v = (uint16_t)__shfl_sync(0xffffffffu, v, src);
			if (v == 0) {
#pragma unroll
				for (uint32_t w = 0; w < INFER_IN / 4; w++)
					pw[w] = __shfl_sync(0xffffffffu, pw[w], src);
				h = st->t.b1[lane];
#pragma unroll
				for (uint32_t i = 0; i < INFER_IN; i++)
					h = fmaf(st->t.w1t[i][lane], (float)((pw[i / 4] >> (8 * (i % 4))) & 0xffu), h);
				h = h > 0.0f ? h : 0.0f;
				if (lane < INFER_OUT)
					s = st->t.b2[lane];
#pragma unroll
				for (uint32_t j = 0; j < INFER_HID; j++) {
					float hj = __shfl_sync(0xffffffffu, h, j);

					if (lane < INFER_OUT)
						s = fmaf(st->t.w2t[j][lane], hj, s);
				}
#pragma unroll
				for (uint32_t k = 0; k < INFER_OUT; k++)
					score[k] = __shfl_sync(0xffffffffu, s, k);
				if (lane == src) {
					v = infer_answer(&lp, l3, ihl, infer_class(score), score);
					infer_local_store(&l);
				}
			}
			if (lane == src)
				mine = v;
		}
		return mine;
	}
};

GNIO_CUDA_HANDLER(infer_handler, "infer", "gnio-infer: a digit classifier answering UDP requests",
		infer_h)
