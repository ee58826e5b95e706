/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's GPU path: its own persistent kernel on gnio's per-item API
 * (consumer "cuda-kernel"), the book and the receiver in GPU memory. One warp
 * per queue, so that queue's items are claimed, and its packets applied, in
 * the order they came; lane 0 runs the per-packet function of itch_state.h
 * (the CPU path's code) on each packet in turn, timed by the GPU's clock, and
 * pushes BBO events through the event channel.
 */
#include <gnio/device/gnio_item.cuh>

#include "itch_state.h"

#define ITCH_THREADS 128

__global__ void
k_itch(gnio_cuda_launch l)
{
	uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x & 31;
	struct itch_state *st = (struct itch_state *)l.state;
	gnio_item it;

	if (warp >= l.nb_qs)
		return;
	gnio_item_init(it);
	while (gnio_item_wait(l, warp, it, 1000000) != GNIO_ITEM_QUIT) {
		if (!it.ready)
			continue;
		for (uint32_t i = 0; i < it.nb; i++) {
			uint16_t v = 0;

			if (lane == 0) {
				gnio_pkt p = gnio_item_pkt(it, i);

				v = itch_on_packet(st, &p, gnio_shm_dev_time_ns());
				gnio_item_set_verdict(it, i, v);
			}
		}
		gnio_item_release(it, l);
	}
}

/* As many warps as queues (ITCH_THREADS / 32 a block): gnio-itch makes one queue a port. */
GNIO_CUDA_KERNEL(itch_kernel, "itch", "gnio-itch: ITCH into the GPU book, one warp per queue", k_itch,
		8, ITCH_THREADS)
