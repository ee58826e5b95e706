/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * item_kernel's GPU side: the application's own persistent kernel on gnio's
 * per-item API instead of a per-packet handler. Each warp serves a few
 * queues, holding one claim per queue; for every burst it swaps the Ethernet
 * addresses of each packet (testpmd's macswap), gives each packet the paired
 * port as its verdict and releases the burst to gnio's completion lcore. It
 * counts the packets and bursts it handled in the application's state, which
 * the CPU reads after stop. item_macswap_shared does the same with many warps
 * on each queue, each taking several ready items at once.
 */
#include <gnio/device/gnio_item.cuh>

#include "item_kernel.h"

/* Queues one warp serves at most: 32 warps are launched, so up to 256 queues. */
#define WARP_QS 8
#define BLOCKS 8
#define THREADS 128
/* Items item_macswap_shared takes at once. */
#define TAKE 8

/* One ready burst, by the warp: each packet's addresses swapped, its verdict; counted in @p st. */
__device__ static void
swap_item(gnio_item &it, struct item_kernel_state *st, uint32_t lane)
{
	for (uint32_t i = lane; i < it.nb; i += 32) {
		gnio_pkt p = gnio_item_pkt(it, i);

		if (p.len < 14) {    /* not even an Ethernet header */
			gnio_item_set_verdict(it, i, gnio_verdict_drop(GNIO_DROP_MALFORMED));
			continue;
		}
		for (int b = 0; b < 6; b++) {
			uint8_t t = p.data[b];

			p.data[b] = p.data[6 + b];
			p.data[6 + b] = t;
		}
		gnio_item_set_verdict(it, i, p.tx_port);
	}
	if (lane == 0 && st != NULL) {
		atomicAdd((unsigned long long *)&st->packets, (unsigned long long)it.nb);
		atomicAdd((unsigned long long *)&st->bursts, 1ull);
	}
}

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
			swap_item(it[k], st, lane);
			gnio_item_release(it[k], l);
		}
	}
}

/*
 * The same work with many warps a queue (warp w serves queue w mod the
 * queues): after each wait, the warp takes the items after it that are ready
 * too (gnio_item_take_ready(), one poll for up to 32; the claims decide among
 * the warps) and releases them together (gnio_item_release_n()).
 */
__global__ void
item_macswap_shared(gnio_cuda_launch l)
{
	struct item_kernel_state *st = (struct item_kernel_state *)l.state;
	uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	uint32_t lane = threadIdx.x & 31;
	gnio_item it, got[TAKE];

	if (l.nb_qs == 0)
		return;
	gnio_item_init(it);
	while (gnio_item_wait(l, warp % l.nb_qs, it, 2000) != GNIO_ITEM_QUIT) {
		uint32_t n;

		if (!it.ready)
			continue;
		n = gnio_item_take_ready(l, it, got, TAKE, ~0u);
		for (uint32_t k = 0; k < n; k++)
			swap_item(got[k], st, lane);
		gnio_item_release_n(got, n, l);
	}
}

GNIO_CUDA_KERNEL(item_macswap_kernel, "item_macswap",
		"swap the Ethernet addresses, forward to the paired port", item_macswap, BLOCKS,
		THREADS)
GNIO_CUDA_KERNEL(item_macswap_shared_kernel, "item_macswap_shared",
		"the same, many warps a queue, ready items taken and released together", item_macswap_shared,
		BLOCKS, THREADS)
