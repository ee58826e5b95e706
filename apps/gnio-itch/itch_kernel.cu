/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's GPU path: its own persistent kernel on gnio's per-item API
 * (consumer "cuda-kernel"), the book and the receiver in GPU memory. One warp
 * (one block) per queue, so that queue's items are claimed, and its packets
 * applied, in the order they came.
 *
 * The packets are in host memory: each byte the parser reads there would be a
 * round trip over PCIe (about a microsecond), one after another. So the whole
 * warp first copies the item's packets into shared memory, 16 bytes a lane,
 * every load in flight at once; then lane 0 runs the per-packet function of
 * itch_state.h (the CPU path's code) on each copy in turn, timed by the GPU's
 * clock, pushing BBO events through the event channel. A packet that turned
 * into a re-request is copied back before it goes out. A packet too long for
 * what is left of the buffer is parsed where it is (slow, still correct).
 */
#include <gnio/device/gnio_item.cuh>

#include "itch_state.h"

#define ITCH_STAGE 45056u   /* bytes of shared memory for 32 packets of an item */
#define ITCH_IN_PLACE 0xffffffffu

/* Copy @p len bytes from @p src to @p dst with the 32 lanes (16 at a time when both allow). */
__device__ static void
warp_copy(uint8_t *dst, const uint8_t *src, uint32_t len, uint32_t lane)
{
	if ((((uintptr_t)src | (uintptr_t)dst) & 15) == 0) {
		uint32_t n16 = len / 16;

		for (uint32_t k = lane; k < n16; k += 32)
			((uint4 *)dst)[k] = ((const uint4 *)src)[k];
		for (uint32_t k = n16 * 16 + lane; k < len; k += 32)
			dst[k] = src[k];
	} else {
		for (uint32_t k = lane; k < len; k += 32)
			dst[k] = src[k];
	}
}

/* Lane @p from's packet descriptor, to every lane. */
__device__ static gnio_pkt
shfl_pkt(const gnio_pkt &p, uint32_t from)
{
	gnio_pkt r;
	uint32_t w[sizeof(gnio_pkt) / 4];

	memcpy(w, &p, sizeof(p));
	for (uint32_t k = 0; k < sizeof(gnio_pkt) / 4; k++)
		w[k] = __shfl_sync(0xffffffffu, w[k], from);
	memcpy(&r, w, sizeof(r));
	return r;
}

__global__ void
k_itch(gnio_cuda_launch l)
{
	__shared__ __align__(16) uint8_t stage[ITCH_STAGE];
	uint32_t warp = blockIdx.x, lane = threadIdx.x & 31;
	struct itch_state *st = (struct itch_state *)l.state;
	gnio_item it;

	if (warp >= l.nb_qs || threadIdx.x >= 32)
		return;
	gnio_item_init(it);
	while (gnio_item_wait(l, warp, it, 1000000) != GNIO_ITEM_QUIT) {
		if (!it.ready)
			continue;
		/* 32 packets at a time: lane j reads packet base + j's descriptor, all at once. */
		for (uint32_t base = 0; base < it.nb; base += 32) {
			uint32_t n = min(32u, it.nb - base), need = 0, at, end;
			gnio_pkt mine = {};

			if (lane < n) {
				mine = gnio_item_pkt(it, base + lane);
				need = (mine.len + 15) & ~15u;
			}
			/* Where each goes in the buffer: a prefix sum of the lengths. */
			end = need;
			for (uint32_t d = 1; d < 32; d <<= 1) {
				uint32_t x = __shfl_up_sync(0xffffffffu, end, d);

				if (lane >= d)
					end += x;
			}
			at = end <= ITCH_STAGE ? end - need : ITCH_IN_PLACE;
			for (uint32_t k = 0; k < n; k++) {
				uint32_t ak = __shfl_sync(0xffffffffu, at, k);
				const uint8_t *src = (const uint8_t *)__shfl_sync(0xffffffffu, (uint64_t)mine.data, k);

				if (ak != ITCH_IN_PLACE)
					warp_copy(stage + ak, src, __shfl_sync(0xffffffffu, mine.len, k), lane);
			}
			__syncwarp();
			for (uint32_t k = 0; k < n; k++) {
				gnio_pkt p = shfl_pkt(mine, k);
				uint32_t ak = __shfl_sync(0xffffffffu, at, k);
				uint8_t *host = p.data;
				uint16_t v = 0;

				if (lane == 0) {
					if (ak != ITCH_IN_PLACE)
						p.data = stage + ak;
					v = itch_on_packet(st, &p, gnio_shm_dev_time_ns());
					gnio_item_set_verdict(it, base + k, v);
				}
				v = __shfl_sync(0xffffffffu, v, 0);
				__syncwarp();
				/* A re-request was written over the copy: it goes out from the packet itself. */
				if (!gnio_verdict_is_drop(v) && ak != ITCH_IN_PLACE)
					warp_copy(host, stage + ak, p.len, lane);
				__syncwarp();
			}
		}
		gnio_item_release(it, l);
	}
}

/* One warp a block, as many blocks as queues can use: gnio-itch makes one queue a port. */
GNIO_CUDA_KERNEL(itch_kernel, "itch", "gnio-itch: ITCH into the GPU book, one warp per queue", k_itch,
		8, 32)
