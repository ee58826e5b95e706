/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's records on the GPU with no CPU work per record (--mode records
 * --consumer cuda-kernel): the user kernel "records-gpu", a device batch
 * function inside the persistent kernel (<gnio/device/gnio_batch.cuh>). Each
 * warp takes a batch (an item), finds each record (the packet's first 128
 * bytes read once into the lane's memory, its headers checked there), has
 * gnio copy the records from packet memory into its rows in GPU memory, sums
 * every byte of every row (a warp a row), and adds the batch's records, bytes
 * and sum to the state with one atomic each.
 */
#include <gnio/device/gnio_batch.cuh>

#include "infer_mlp.h"

#define RECORD_BYTES 1472u

struct records_b {
	static constexpr uint32_t in_bytes = RECORD_BYTES;
	static constexpr uint32_t out_bytes = 8;

	__device__ static uint16_t
	row_at(struct gnio_pkt *pk, uint32_t *off, void *state)
	{
		const struct infer_state *st = (const struct infer_state *)state;
		struct infer_local l;
		struct gnio_pkt lp;
		uint32_t l3 = 0, ihl = 0;
		uint16_t v;

		infer_local_load(pk, &l, &lp);
		v = infer_udp_to(st, &lp, &l3, &ihl);
		if (v != 0)
			return v;
		if (gnio_ld_be16(lp.data + l3 + ihl + 4) != 8 + RECORD_BYTES ||
				pk->len < l3 + ihl + 8 + RECORD_BYTES)
			return gnio_verdict_drop(GNIO_DROP_MALFORMED);
		*off = l3 + ihl + 8;
		return 0;
	}

	__device__ static void
	batch(const gnio_dev_batch &b, void *state, unsigned int lane)
	{
		struct infer_state *st = (struct infer_state *)state;
		unsigned long long all = 0;

		for (uint32_t r = 0; r < b.rows; r++) {
			const uint32_t *w = (const uint32_t *)(b.in + (size_t)r * RECORD_BYTES);
			unsigned long long s = 0;

			for (uint32_t t = lane; t < RECORD_BYTES / 4; t += 32) {
				uint32_t x = w[t];

				s += (x & 0xffu) + ((x >> 8) & 0xffu) + ((x >> 16) & 0xffu) + (x >> 24);
			}
			for (int o = 16; o > 0; o /= 2)
				s += __shfl_down_sync(0xffffffffu, s, o);
			if (lane == 0) {
				((unsigned long long *)b.out)[r] = s;
				all += s;
			}
		}
		if (lane == 0) {
			atomicAdd((unsigned long long *)&st->records, (unsigned long long)b.rows);
			atomicAdd((unsigned long long *)&st->record_bytes, (unsigned long long)b.rows * RECORD_BYTES);
			atomicAdd((unsigned long long *)&st->record_sum, all);
		}
	}

	__device__ static uint16_t
	answer(struct gnio_pkt *pk, const void *out_row, void *state)
	{
		(void)pk;
		(void)out_row;
		(void)state;
		return gnio_verdict_drop(GNIO_DROP_HANDLER);    /* taken in: nothing goes back */
	}
};

/* 8 warps a queue, each a batch at a time (1056 pollers of host memory brought PCIe reads to a crawl). */
GNIO_CUDA_BATCH_KERNEL(records_k, "records-gpu", "gnio-infer: 1472-byte records summed on the GPU, "
		"a batch a warp", records_b, 8)
