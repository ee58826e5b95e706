/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * udp_top's handler: counts packets per UDP destination port in its state
 * (GPU memory on a CUDA GPU) and, every period (and every N packets, for
 * tests), publishes the busiest ports through gnio's event channel. One
 * __host__ __device__ function: gnio runs it in the persistent kernel, the
 * per-burst and graph kernels, and on the CPU (host consumer). Every packet is
 * forwarded unchanged to the paired port.
 */
#include <time.h>

#include <gnio/device/gnio_events.h>
#include <gnio/device/gnio_kernels.cuh>

#include "udp_top.h"

/* Now, in ns: the GPU's global timer, or the CPU's monotonic clock. */
__host__ __device__ static inline uint64_t
now_ns(void)
{
#ifdef __CUDA_ARCH__
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

__host__ __device__ static inline uint64_t
add64(uint64_t *p, uint64_t v)
{
#ifdef __CUDA_ARCH__
	return atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

__host__ __device__ static inline uint32_t
add32(uint32_t *p, uint32_t v)
{
#ifdef __CUDA_ARCH__
	return atomicAdd(p, v);
#else
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* One thread wins the right to publish the event due at @p due. */
__host__ __device__ static inline bool
claim(uint64_t *next, uint64_t due, uint64_t then)
{
#ifdef __CUDA_ARCH__
	return atomicCAS((unsigned long long *)next, due, then) == due;
#else
	return __atomic_compare_exchange_n(next, &due, then, false, __ATOMIC_RELAXED,
			__ATOMIC_RELAXED);
#endif
}

/* Scan the counts for the busiest ports (a few thousand loads, once a period) and push them. */
__host__ __device__ static void
publish(struct udp_top_state *st, uint64_t total)
{
	struct udp_top_event ev = {};

	ev.seq = add64(&st->published, 1);
	ev.total = total;
	for (uint32_t port = 0; port < 65536; port++) {
		uint32_t c = st->count[port];

		for (int k = 0; c != 0 && k < UDP_TOP_K; k++) {
			if (c > ev.count[k] || (c == ev.count[k] && port < ev.port[k] && ev.count[k] != 0)) {
				for (int j = UDP_TOP_K - 1; j > k; j--) {
					ev.count[j] = ev.count[j - 1];
					ev.port[j] = ev.port[j - 1];
				}
				ev.count[k] = c;
				ev.port[k] = port;
				break;
			}
		}
	}
	gnio_event_push(st->events, &ev);
}

struct udp_top {
	__host__ __device__ static uint16_t
	packet(struct gnio_pkt *pkt, void *arg)
	{
		struct udp_top_state *st = (struct udp_top_state *)arg;
		uint16_t et = 0;
		uint32_t l3 = gnio_pkt_l3(pkt->data, pkt->len, &et), ihl, port;
		uint64_t total, due, now;

		if (l3 == 0 || et != GNIO_ETH_IPV4)
			return pkt->tx_port;
		ihl = gnio_ipv4_hlen(pkt->data, pkt->len, pkt->pkt_len, l3);
		if (ihl == 0 || pkt->data[l3 + 9] != GNIO_IPPROTO_UDP || pkt->len < l3 + ihl + 8)
			return pkt->tx_port;
		port = gnio_ld_be16(pkt->data + l3 + ihl + 2);
		add32(&st->count[port], 1);
		total = add64(&st->total, 1) + 1;
		if (st->every != 0 && total % st->every == 0) {
			publish(st, total);
		} else if (st->period_ns != 0) {
			now = now_ns();
			due = st->next_ns;
			if (now >= due && claim(&st->next_ns, due, now + st->period_ns))
				publish(st, total);
		}
		return pkt->tx_port;
	}
};

GNIO_CUDA_HANDLER(udp_top_handler, "udp_top", "count packets per UDP destination port, "
		"publish the busiest", udp_top)
