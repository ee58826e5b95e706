/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * item_kernel's GPU side: the application's own persistent kernel on gnio's
 * per-item API instead of a per-packet handler. Each warp serves a few
 * queues, holding one claim per queue; for every burst it swaps the Ethernet
 * addresses of each packet (testpmd's macswap), gives each packet the paired
 * port as its verdict and releases the burst to gnio's completion lcore. It
 * counts the packets and bursts it handled in the application's state, which
 * the CPU reads after stop.
 */
#include <gnio/device/gnio_item.cuh>

#include "item_kernel.h"

/* Queues one warp serves at most: 32 warps are launched, so up to 256 queues. */
#define WARP_QS 8
#define BLOCKS 8
#define THREADS 128

__global__ void
item_macswap(gnio_cuda_launch l)
{
	struct item_kernel_state *st = (struct item_kernel_state *)l.state;
	uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	uint32_t nb_warps = gridDim.x * blockDim.x / 32;
	uint32_t lane = threadIdx.x & 31;
	gnio_item it[WARP_QS];
	uint32_t nq = 0, live;

	for (uint32_t q = warp; q < l.nb_qs && nq < WARP_QS; q += nb_warps)
		gnio_item_init(it[nq++]);
	live = (1u << nq) - 1;
	while (live != 0) {
		for (uint32_t k = 0; k < nq; k++) {
			if (!(live & (1u << k)))
				continue;
			/* A short wait per queue, so the others are looked at too. */
			if (gnio_item_wait(l, warp + k * nb_warps, it[k], 2000) == GNIO_ITEM_QUIT) {
				live &= ~(1u << k);
				continue;
			}
			if (!it[k].ready)
				continue;
			for (uint32_t i = lane; i < it[k].nb; i += 32) {
				gnio_pkt p = gnio_item_pkt(it[k], i);

				if (p.len < 14) {    /* not even an Ethernet header */
					gnio_item_set_verdict(it[k], i, gnio_verdict_drop(GNIO_DROP_MALFORMED));
					continue;
				}
				for (int b = 0; b < 6; b++) {
					uint8_t t = p.data[b];

					p.data[b] = p.data[6 + b];
					p.data[6 + b] = t;
				}
				gnio_item_set_verdict(it[k], i, p.tx_port);
			}
			if (lane == 0 && st != NULL) {
				atomicAdd((unsigned long long *)&st->packets, (unsigned long long)it[k].nb);
				atomicAdd((unsigned long long *)&st->bursts, 1ull);
			}
			gnio_item_release(it[k], l);
		}
	}
}

GNIO_CUDA_KERNEL(item_macswap_kernel, "item_macswap",
		"swap the Ethernet addresses, forward to the paired port", item_macswap, BLOCKS,
		THREADS)
