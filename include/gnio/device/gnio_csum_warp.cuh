/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Warp-wide one's-complement sums (Internet checksums) of byte ranges in
 * packet memory: the 32 lanes of a warp sum up to GNIO_CSUM_BATCH lanes'
 * ranges together with wide, coalesced loads. The built-in csum engine sums
 * every byte of its packets with it; a handler's packet_warp() may too.
 * Device code (nvcc).
 */
#ifndef GNIO_CSUM_WARP_CUH
#define GNIO_CSUM_WARP_CUH

#include <stdint.h>

#include "../gnio_pkt.h"

namespace gnio {

/**
 * Keep the bytes of one 32-bit word that lie in a range.
 * @param w the word (little-endian: byte k at bits 8k)
 * @param at the packet offset of its first byte
 * @param start the range's first packet offset
 * @param end the range's end (exclusive)
 * @return @p w with the bytes outside [start, end) cleared
 */
__device__ __forceinline__ uint32_t
word_in_range(uint32_t w, uint32_t at, uint32_t start, uint32_t end)
{
	uint32_t lo = start > at ? min(start - at, 4u) : 0u;
	uint32_t hi = end > at ? min(end - at, 4u) : 0u;
	uint32_t keep = (hi >= 4 ? 0xffffffffu : (1u << (8 * hi)) - 1u) &
		~(lo >= 4 ? 0xffffffffu : (1u << (8 * lo)) - 1u);

	return w & keep;
}

/** Packets whose payloads one warp sums at once (their loads are in flight together). */
#define GNIO_CSUM_BATCH 8

/**
 * Warp-wide sum of a 64-bit value (all 32 lanes call it).
 * @param v this lane's value
 * @return the sum over the warp, in every lane
 */
__device__ __forceinline__ unsigned long long
warp_sum64(unsigned long long v)
{
	for (int d = 16; d > 0; d >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, d);
	return v;
}

/**
 * Each lane's byte range of its packet, summed with the whole warp (all 32
 * lanes call it; a lane with nothing to sum passes @p off >= @p end). For 16-byte
 * aligned packets: in each step, each lane loads one whole 16-byte chunk of up
 * to GNIO_CSUM_BATCH ranges (all those loads in flight together; each range's
 * chunks are one coalesced 512-byte sweep per step, starting on a 128-byte
 * line so a sweep is four whole lines, not five), keeps the bytes in range and
 * adds them as little-endian 32-bit words, a byte-swapped sum that is swapped
 * back at the end. The bytes after a range's last whole chunk (fewer than 16)
 * are loaded one per lane and added big-endian. A lane whose packet is not
 * 16-byte aligned sums it alone, sequentially.
 * @param pkt this lane's packet (its first segment)
 * @param off first byte of its range (even)
 * @param end end of its range (exclusive)
 * @param len bytes readable at @p pkt, at least @p end
 * @param lane this lane (0..31)
 * @return this lane's folded one's-complement sum of big-endian words by
 *   their offset in @p pkt (not complemented)
 */
__device__ __forceinline__ uint16_t
warp_sum_ranges(const uint8_t *pkt, uint32_t off, uint32_t end, uint32_t len, unsigned int lane)
{
	bool has = off < end;
	bool alone = has && ((uintptr_t)pkt & 15u) != 0;
	uint16_t mine = 0;
	unsigned int need;

	if (alone)
		mine = gnio_csum_fold32(gnio_csum_add(pkt + off, end - off, 0));
	/* Every lane takes part in what follows (shuffles), its range summed or not. */
	need = __ballot_sync(0xffffffffu, has && !alone);
	while (need != 0) {
		const uint8_t *p[GNIO_CSUM_BATCH];
		uint32_t o[GNIO_CSUM_BATCH], e[GNIO_CSUM_BATCH], stop[GNIO_CSUM_BATCH];
		unsigned long long acc[GNIO_CSUM_BATCH];
		uint32_t tail[GNIO_CSUM_BATCH];
		int who[GNIO_CSUM_BATCH];
		bool more = true;

#pragma unroll
		for (int k = 0; k < GNIO_CSUM_BATCH; k++) {
			int j = need != 0 ? __ffs(need) - 1 : -1;

			who[k] = j;
			need &= need - 1;
			p[k] = (const uint8_t *)__shfl_sync(0xffffffffu, (uintptr_t)pkt, j < 0 ? 0 : j);
			o[k] = __shfl_sync(0xffffffffu, off, j < 0 ? 0 : j);
			e[k] = __shfl_sync(0xffffffffu, end, j < 0 ? 0 : j);
			stop[k] = min(e[k], __shfl_sync(0xffffffffu, len, j < 0 ? 0 : j) & ~15u);
			if (j < 0)
				e[k] = stop[k] = o[k] = 0;
			acc[k] = 0;
			/* Tail bytes: one per lane, big-endian by their offset's parity. */
			uint32_t t = max(o[k], stop[k]) + lane;

			tail[k] = lane < 16 && t < e[k] ? (uint32_t)p[k][t] << ((t & 1) ? 0 : 8) : 0u;
		}
		for (uint32_t step = lane * 16u; more; step += 512u) {
			uint4 w[GNIO_CSUM_BATCH];

			more = false;
#pragma unroll
			for (int k = 0; k < GNIO_CSUM_BATCH; k++) {
				uint32_t c = (o[k] & ~127u) + step;

				if (c < stop[k])
					w[k] = *(const uint4 *)(p[k] + c);
			}
#pragma unroll
			for (int k = 0; k < GNIO_CSUM_BATCH; k++) {
				uint32_t c = (o[k] & ~127u) + step;

				if (c < stop[k]) {
					acc[k] += word_in_range(w[k].x, c, o[k], e[k]);
					acc[k] += word_in_range(w[k].y, c + 4, o[k], e[k]);
					acc[k] += word_in_range(w[k].z, c + 8, o[k], e[k]);
					acc[k] += word_in_range(w[k].w, c + 12, o[k], e[k]);
					more |= c + 512u < stop[k];
				}
			}
			more = __any_sync(0xffffffffu, more);
		}
#pragma unroll
		for (int k = 0; k < GNIO_CSUM_BATCH; k++) {
			unsigned long long a = warp_sum64(acc[k]);
			unsigned long long t = warp_sum64(tail[k]);
			uint32_t s;

			a = (a & 0xffffffffull) + (a >> 32);
			a = (a & 0xffffffffull) + (a >> 32);
			s = gnio_bswap16(gnio_csum_fold32((uint32_t)(a & 0xffffu) + (uint32_t)(a >> 16)));
			s += gnio_csum_fold32((uint32_t)(t & 0xffffffffull) + (uint32_t)(t >> 32));
			if ((int)lane == who[k])
				mine = gnio_csum_fold32(s);
		}
	}
	return mine;
}

} /* namespace gnio */

#endif /* GNIO_CSUM_WARP_CUH */
