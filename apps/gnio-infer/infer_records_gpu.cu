/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's records on the GPU with no CPU work per record (--mode records
 * --consumer cuda-kernel): the user kernel "records-gpu", a device batch
 * function inside the persistent kernel (<gnio/device/gnio_batch.cuh>). Each
 * warp takes a batch (an item), finds each record (the packet's first 64
 * bytes read once into the lane's memory, its headers checked there), has
 * gnio copy the records from packet memory into its rows in GPU memory, sums
 * every byte of every row (byte i weighing i + 1; a warp four rows at once),
 * and adds the batch's records, bytes and sum to the state with one atomic
 * each.
 */
#include <gnio/device/gnio_batch.cuh>

#include "infer_mlp.h"

#define RECORD_BYTES 1472u
/* Rows a warp sums at once in batch(). */
#define ROWS_AT_ONCE 4u

/*
 * The 16 bytes at byte @p at of a record (0 past its end), byte i weighing
 * i + 1: (at + 1) x their sum + each weighed by its place in the chunk.
 */
__device__ __forceinline__ unsigned long long
weighed(const uint4 &c, uint32_t at)
{
	uint32_t w[4] = { c.x, c.y, c.z, c.w }, plain = 0, placed = 0;

#pragma unroll
	for (uint32_t q = 0; q < 4; q++) {
		uint32_t s = __vsadu4(w[q], 0);

		plain += s;
		placed += 4 * q * s + __dp4a(w[q], 0x03020100u, 0u);
	}
	return (unsigned long long)(at + 1) * plain + placed;
}

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

		/*
		 * The first 64 bytes hold the headers of any record but one with
		 * two VLAN tags and IP options (those are read again, 128 bytes):
		 * every byte read here crosses PCIe once more in the copy.
		 */
		infer_local_load_n(pk, &l, &lp, 64);
		v = infer_udp_to(st, &lp, &l3, &ihl);
		if (v != 0 && lp.len < pk->len) {
			infer_local_load(pk, &l, &lp);
			v = infer_udp_to(st, &lp, &l3, &ihl);
		}
		if (v != 0)
			return v;
		if (gnio_ld_be16(lp.data + l3 + ihl + 4) != 8 + RECORD_BYTES ||
				pk->len < l3 + ihl + 8 + RECORD_BYTES)
			return gnio_verdict_drop(GNIO_DROP_MALFORMED);
		*off = l3 + ihl + 8;
		return 0;
	}

	/*
	 * Every byte of every row: a warp reads ROWS_AT_ONCE rows at a time, each
	 * lane its chunks of each (all those loads in flight together), then sums
	 * each row across the lanes.
	 */
	__device__ static void
	batch(const gnio_dev_batch &b, void *state, unsigned int lane)
	{
		constexpr uint32_t chunks = RECORD_BYTES / 16, per_lane = (chunks + 31) / 32;
		struct infer_state *st = (struct infer_state *)state;
		unsigned long long all = 0;

		for (uint32_t r0 = 0; r0 < b.rows; r0 += ROWS_AT_ONCE) {
			uint4 x[ROWS_AT_ONCE][per_lane];
			unsigned long long s[ROWS_AT_ONCE];

#pragma unroll
			for (uint32_t k = 0; k < ROWS_AT_ONCE; k++)
#pragma unroll
				for (uint32_t t = 0; t < per_lane; t++) {
					uint32_t c = t * 32 + lane;

					x[k][t] = r0 + k < b.rows && c < chunks ?
						((const uint4 *)(b.in + (size_t)(r0 + k) * RECORD_BYTES))[c] :
						make_uint4(0, 0, 0, 0);
				}
#pragma unroll
			for (uint32_t k = 0; k < ROWS_AT_ONCE; k++) {
				s[k] = 0;
#pragma unroll
				for (uint32_t t = 0; t < per_lane; t++)
					s[k] += weighed(x[k][t], (t * 32 + lane) * 16);
#pragma unroll
				for (int o = 16; o > 0; o /= 2)
					s[k] += __shfl_down_sync(0xffffffffu, s[k], o);
			}
			if (lane == 0)
#pragma unroll
				for (uint32_t k = 0; k < ROWS_AT_ONCE; k++)
					if (r0 + k < b.rows) {
						((unsigned long long *)b.out)[r0 + k] = s[k];
						all += s[k];
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

/*
 * Up to 32 warps a queue (--cuda-warps: fewer; on 8 queues of the H200, 8
 * and 16 carried 0.76x and 0.98x of what 32 did), each a batch at a time
 * (1056 pollers of host memory brought PCIe reads to a crawl).
 */
GNIO_CUDA_BATCH_KERNEL(records_k, "records-gpu", "gnio-infer: 1472-byte records summed on the GPU, "
		"a batch a warp", records_b, 32)
