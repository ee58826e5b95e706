/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The built-in engines' kernels: each engine a handler type over the same
 * GNIO_HD function the host runs, instantiated in every CUDA consumer's
 * kernels by <gnio/device/gnio_kernels.cuh>. The engines' state is the engine
 * context, which the kernels copy to shared memory first. The csum engine
 * sums with the whole warp (packet_warp): each lane plans its packet on a
 * shared-memory copy of the headers, then the warp sums the payloads from
 * packet memory together, segment after segment.
 */
#include <cuda_runtime.h>

#include "gnio_builtin.h"
#include "gnio_csum_warp.cuh"
#include "gnio_engine_list.h"
#include "gnio_kernels.cuh"

namespace {

/*
 * Bytes of each packet the csum engine copies to shared memory: a whole
 * 128-byte line, which holds every header the plan reads (at most
 * GNIO_CSUM_PLAN_WINDOW, checked by the fuzz harness) and the start of the
 * payload, summed from there instead of being read over PCIe again.
 */
#define CSUM_WINDOW 128u
#define WARPS_PER_BLOCK (GNIO_CUDA_PERSISTENT_THREADS / 32)

#if GNIO_CSUM_PLAN_WINDOW > 128
#error "the csum plan reads past the shared-memory window"
#endif

/*
 * Copy the first CSUM_WINDOW bytes (or fewer: the readable length) of each
 * lane's packet into the warp's shared-memory window, with the whole warp:
 * consecutive lanes load consecutive 16-byte chunks of one packet, so each
 * packet's headers come in one or two coalesced requests instead of dozens of
 * byte loads. Bytes past the last whole chunk, or of a packet that is not
 * 16-byte aligned, are loaded one by one.
 */
__device__ __forceinline__ void
warp_header_window(uint8_t (*win)[CSUM_WINDOW], const uint8_t *pkt, uint32_t len, unsigned int lane)
{
	const unsigned int chunks = CSUM_WINDOW / 16;

	for (unsigned int idx = lane; idx < 32 * chunks; idx += 32) {
		unsigned int j = idx / chunks, c = (idx % chunks) * 16;
		const uint8_t *p = (const uint8_t *)__shfl_sync(0xffffffffu, (uintptr_t)pkt, j);
		uint32_t n = min(__shfl_sync(0xffffffffu, len, j), (uint32_t)CSUM_WINDOW);

		if (c + 16 <= n && ((uintptr_t)p & 15u) == 0)
			*(uint4 *)&win[j][c] = *(const uint4 *)(p + c);
		else
			for (uint32_t b = c; b < c + 16 && b < n; b++)
				win[j][b] = p[b];
	}
	__syncwarp();
}

/*
 * The csum engine with the whole warp: each lane plans its packet on a
 * shared-memory copy of the headers, sums the part of the payload in that
 * copy, then the warp sums the rest from packet memory together: the first
 * segment, then each further segment of chained packets in turn. A packet
 * whose segments do not reach its end is "unverified", never good.
 */
__device__ __forceinline__ uint16_t
lane_csum(const gnio_eng_ctx *ctx, const gnio_pkt &pk, bool valid, unsigned int lane)
{
	__shared__ uint8_t win[WARPS_PER_BLOCK][32][CSUM_WINDOW];
	uint8_t (*w)[CSUM_WINDOW] = win[(threadIdx.x / 32) % WARPS_PER_BLOCK];
	const uint8_t *pkt = pk.data;
	uint32_t len = pk.len;
	gnio_csum_plan plan;
	uint16_t v = 0;
	uint32_t off = 0, end = 0, fend = 0, sum = 0, at;

	warp_header_window(w, pkt, valid ? len : 0, lane);
	plan.n = 0;
	if (valid)
		v = gnio_eng_csum_plan(ctx, w[lane], len, pk.pkt_len, pk.rx_port, &plan);
	if (plan.n != 0) {
		/* The first segment's part; the plan ends within the header window's reach. */
		off = plan.off;
		end = plan.off + plan.n;
		fend = min(end, len);
		sum = plan.sum;
		if (off < CSUM_WINDOW) {
			uint32_t wend = max(off, min(fend, CSUM_WINDOW));

			sum = gnio_csum_add_piece(w[lane] + off, off, wend - off, plan.off, end, sum);
			off = wend;
		}
	}
	__syncwarp();     /* the window is reused by the next 32 packets */
	sum += gnio::warp_sum_ranges(pkt, off, fend, len, lane);
	/* Chained packets: one segment of each per pass (off is even in each). */
	at = len;
	for (uint32_t k = 0; __any_sync(0xffffffffu, plan.n != 0 && at < end && k < pk.nb_segs); k++) {
		bool mine = plan.n != 0 && at < end && k < pk.nb_segs;
		const uint8_t *sp = mine ? pk.segs[k].addr : NULL;
		uint32_t sl = mine ? pk.segs[k].len : 0, se = mine ? min(sl, end - at) : 0;
		uint16_t ps = gnio::warp_sum_ranges(sp, 0, se, se, lane);

		if (mine) {
			sum += (at & 1u) ? gnio_bswap16(ps) : ps;
			at += sl;
		}
	}
	return plan.n != 0 ? gnio_eng_csum_judge(&plan, sum, at) : v;
}

/* Engine E as a handler type. */
template <unsigned int E>
struct engine {
	__host__ __device__ static uint16_t
	packet(gnio_pkt *pk, void *state)
	{
		return gnio_engine_run(E, (const gnio_eng_ctx *)state, pk->data, pk->len, pk->pkt_len,
				pk->rx_port);
	}
};

/* The csum engine: every byte, with the warp. */
struct engine_csum {
	__device__ static uint16_t
	packet_warp(gnio_pkt *pk, bool valid, void *state, unsigned int lane)
	{
		return lane_csum((const gnio_eng_ctx *)state, *pk, valid, lane);
	}
};

template <unsigned int E>
struct engine_of {
	using type = engine<E>;
};
template <>
struct engine_of<GNIO_ENGINE_CSUM> {
	using type = engine_csum;
};

#define BK_X_KERNELS(e, n, g, h) \
	GNIO_CUDA_KERNELS_OF(engine_of<GNIO_ENGINE_ ## e>::type),
const struct gnio_cuda_kernels bk_kernels[GNIO_ENGINE_MAX] = {
	GNIO_ENGINES(BK_X_KERNELS)
};
#undef BK_X_KERNELS

} /* namespace */

extern "C" const struct gnio_cuda_kernels *
gnio_builtin_cuda(unsigned int id)
{
	return id < GNIO_ENGINE_MAX ? &bk_kernels[id] : NULL;
}
