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

/* Chunks of 16 bytes that hold a request's first INFER_LOCAL_BYTES bytes, however aligned. */
#define INFER_CHUNKS (INFER_LOCAL_BYTES / 16 + 1)

/*
 * The warp's packets in shared memory, 32 of them a warp: a lane reading its
 * own packet's 16-byte chunks makes one PCIe read a chunk, and the GPU's rate
 * of those bounds the answered rate (about 48 M/s, issue 16); eight lanes
 * reading one packet's consecutive chunks with one load make whole lines.
 */
__device__ static inline uint4 (*infer_stage(void))[INFER_CHUNKS]
{
	__shared__ __align__(16) uint4 stage[GNIO_CUDA_PERSISTENT_THREADS / 32][32][INFER_CHUNKS];

	return stage[(threadIdx.x / 32) % (GNIO_CUDA_PERSISTENT_THREADS / 32)];
}

/*
 * Move the chunks of the warp's packets between packet memory and the stage,
 * four packets a step (lane l on chunk l % 8, and 8, of packet 4 step + l / 8);
 * @p base and @p chunks of each lane's packet (0 chunks: none). @p in: packet
 * memory to the stage, else back.
 */
__device__ static inline void
infer_warp_move(uint4 (*st)[INFER_CHUNKS], uintptr_t base, uint32_t chunks, unsigned int lane, bool in)
{
	uint4 r[8], r8[8];
	uint32_t k = lane % 8;

	/* All loads (or stage reads) first, so that they are in flight together. */
#pragma unroll
	for (uint32_t j = 0; j < 8; j++) {
		uint32_t q = 4 * j + lane / 8;
		uint4 *bq = (uint4 *)__shfl_sync(0xffffffffu, (unsigned long long)base, q);
		uint32_t cq = __shfl_sync(0xffffffffu, chunks, q);

		if (k < cq)
			r[j] = in ? bq[k] : st[q][k];
		if (k == 0 && cq > 8)
			r8[j] = in ? bq[8] : st[q][8];
	}
#pragma unroll
	for (uint32_t j = 0; j < 8; j++) {
		uint32_t q = 4 * j + lane / 8;
		uint4 *bq = (uint4 *)__shfl_sync(0xffffffffu, (unsigned long long)base, q);
		uint32_t cq = __shfl_sync(0xffffffffu, chunks, q);

		if (k < cq) {
			if (in)
				st[q][k] = r[j];
			else
				bq[k] = r[j];
		}
		if (k == 0 && cq > 8) {
			if (in)
				st[q][8] = r8[j];
			else
				bq[8] = r8[j];
		}
	}
	__syncwarp();
}

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

		if (__popc(todo) > INFER_WARP_MAX) {
			uint4 (*stage)[INFER_CHUNKS] = infer_stage();
			uintptr_t a = valid ? (uintptr_t)pkt->data : 0, base = a & ~(uintptr_t)15;
			uint32_t n = !valid ? 0 : pkt->len < INFER_LOCAL_BYTES ? pkt->len : INFER_LOCAL_BYTES;
			uint32_t chunks = valid ? (uint32_t)(a - base + n + 15) / 16 : 0;
			struct infer_local l;
			struct gnio_pkt lp;
			uint16_t v = 0;

			infer_warp_move(stage, base, chunks, lane, true);
			if (valid) {
				for (uint32_t k = 0; k < chunks; k++)
					l.c[k] = stage[lane][k];
				lp = *pkt;
				lp.data = (uint8_t *)l.c + (a - base);
				lp.len = n;
				v = infer_on_local(st, &lp);
				/* Back only what was answered (a drop leaves the packet as it came). */
				if (!gnio_verdict_is_drop(v))
					for (uint32_t k = 0; k < chunks; k++)
						stage[lane][k] = l.c[k];
				else
					chunks = 0;
			}
			__syncwarp();
			infer_warp_move(stage, base, chunks, lane, false);
			return v;
		}
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
