/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file csum: verify checksums over every byte, then forward (a checksum
 * validator in front of an application that needs good packets only).
 *
 *  - IPv4: the header checksum; then the TCP or UDP checksum of the whole
 *    segment with its pseudo-header (UDP checksum 0: none was sent).
 *  - IPv6: the TCP or UDP checksum (no extension headers are walked; UDP
 *    checksum 0 is invalid over IPv6).
 *  - A bad sum drops the packet as "bad_csum". A good packet, a fragment or a
 *    packet of another kind goes unchanged to the paired port.
 *  - Every byte is summed, across the segments of a chained mbuf too: the
 *    caller gives the segments after the first (gnio_eng_csum_segs(), or
 *    gnio_csum_add_piece() per segment). A packet whose bytes are not all
 *    there to read is never called good: it is dropped as "unverified".
 *
 * The engine is split in two so a GPU warp can sum one packet's payload with
 * all its lanes (wide, coalesced loads): gnio_eng_csum_plan() parses the
 * headers and says which bytes to sum, gnio_eng_csum_finish() judges the sum.
 * gnio_eng_csum() chains the two with a sequential sum (the host path).
 */
#ifndef GNIO_ENG_CSUM_H
#define GNIO_ENG_CSUM_H

#include "gnio_eng_ctx.h"
#include "gnio_pkt.h"
#include "gnio_verdict.h"

/**
 * The plan reads no byte at or past this offset (the deepest header it reads
 * ends at 14 + 8 + 60 + 8 = 90: two VLAN tags, IPv4 with options, UDP), so a
 * GPU can give it a copy of the first bytes only. The fuzz harness checks it.
 */
#define GNIO_CSUM_PLAN_WINDOW 96u

/** What is left to sum of one packet. */
struct gnio_csum_plan {
	uint32_t off;      /**< first byte to sum (even) */
	uint32_t n;        /**< bytes to sum; 0: the verdict is final */
	uint32_t sum;      /**< pseudo-header sum so far (not folded) */
	uint16_t fwd;      /**< verdict when the sum is good */
};

/**
 * Parse the headers; verify the IPv4 header checksum. @return the verdict
 * when plan->n is 0, else the segment at plan->off still has to be summed.
 */
GNIO_HD static inline uint16_t
gnio_eng_csum_plan(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, const uint8_t *GNIO_RESTRICT pkt,
		uint32_t len, uint32_t pkt_len, uint16_t rx_port, struct gnio_csum_plan *plan)
{
	uint16_t et = 0;
	uint32_t l3 = gnio_pkt_l3(pkt, len, &et);
	uint32_t l4, seg, sum;
	uint8_t proto;

	plan->n = 0;
	plan->fwd = ctx->fwd_port[rx_port];
	if (l3 == 0)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (et == GNIO_ETH_IPV4) {
		uint32_t ihl = gnio_ipv4_hlen(pkt, len, pkt_len, l3);

		if (ihl == 0)
			return gnio_verdict_drop(GNIO_DROP_MALFORMED);
		if (gnio_csum_fold(pkt + l3, ihl, 0) != 0xffffu)
			return gnio_verdict_drop(GNIO_DROP_BAD_CSUM);
		/* Fragments: the segment is not whole here. */
		if ((gnio_ld_be16(pkt + l3 + 6) & 0x3fffu) != 0)
			return plan->fwd;
		proto = pkt[l3 + 9];
		l4 = l3 + ihl;
		seg = gnio_ld_be16(pkt + l3 + 2) - ihl;
		sum = gnio_csum_add(pkt + l3 + 12, 8, 0);
	} else if (et == GNIO_ETH_IPV6) {
		if (len < l3 + 40)
			return gnio_verdict_drop(GNIO_DROP_MALFORMED);
		seg = gnio_ld_be16(pkt + l3 + 4);
		if (l3 + 40 + seg > pkt_len)
			return gnio_verdict_drop(GNIO_DROP_MALFORMED);
		proto = pkt[l3 + 6];
		l4 = l3 + 40;
		sum = gnio_csum_add(pkt + l3 + 8, 32, 0);
	} else {
		return plan->fwd;
	}
	if (proto != GNIO_IPPROTO_UDP && proto != GNIO_IPPROTO_TCP)
		return plan->fwd;
	if (proto == GNIO_IPPROTO_UDP) {
		if (seg < 8 || len < l4 + 8)
			return gnio_verdict_drop(GNIO_DROP_MALFORMED);
		if (gnio_ld_be16(pkt + l4 + 6) == 0)
			return et == GNIO_ETH_IPV4 ? plan->fwd : gnio_verdict_drop(GNIO_DROP_BAD_CSUM);
		/* The UDP length says what was summed by the sender. */
		if (gnio_ld_be16(pkt + l4 + 4) < 8 || gnio_ld_be16(pkt + l4 + 4) > seg)
			return gnio_verdict_drop(GNIO_DROP_MALFORMED);
		seg = gnio_ld_be16(pkt + l4 + 4);
	} else if (seg < 20 || len < l4 + 20) {
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	}
	/* The segment may go on past the first segment (@p len): the caller sums the rest. */
	plan->off = l4;
	plan->n = seg;
	plan->sum = sum + proto + seg;
	return plan->fwd;
}

/** Verdict from the folded one's-complement sum of the planned bytes and the pseudo-header. */
GNIO_HD static inline uint16_t
gnio_eng_csum_finish(const struct gnio_csum_plan *plan, uint16_t folded)
{
	return folded == 0xffffu ? plan->fwd : gnio_verdict_drop(GNIO_DROP_BAD_CSUM);
}

/**
 * Verdict once the pieces of a plan were summed: @p sum covers the packet's
 * bytes up to offset @p reached (the end of the last piece added). Bytes of the
 * plan past that were not there to read: "unverified", never good.
 */
GNIO_HD static inline uint16_t
gnio_eng_csum_judge(const struct gnio_csum_plan *plan, uint32_t sum, uint32_t reached)
{
	if (reached < plan->off + plan->n)
		return gnio_verdict_drop(GNIO_DROP_UNVERIFIED);
	return gnio_eng_csum_finish(plan, gnio_csum_fold32(sum));
}

/**
 * csum over a packet in segments: @p len bytes at @p pkt (the first segment),
 * then @p nb_segs more at @p segs (NULL when there are none).
 */
GNIO_HD static inline uint16_t
gnio_eng_csum_segs(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, const uint8_t *GNIO_RESTRICT pkt,
		uint32_t len, uint32_t pkt_len, uint16_t rx_port, const struct gnio_seg *segs,
		uint32_t nb_segs)
{
	struct gnio_csum_plan plan;
	uint16_t v = gnio_eng_csum_plan(ctx, pkt, len, pkt_len, rx_port, &plan);
	uint32_t end = plan.off + plan.n, at = len, sum;

	if (plan.n == 0)
		return v;
	sum = gnio_csum_add_piece(pkt, 0, len, plan.off, end, plan.sum);
	for (uint32_t i = 0; i < nb_segs && at < end; i++) {
		sum = gnio_csum_add_piece(segs[i].addr, at, segs[i].len, plan.off, end, sum);
		at += segs[i].len;
	}
	return gnio_eng_csum_judge(&plan, sum, at);
}

/** csum with only the first segment readable: a packet longer than that is "unverified". */
GNIO_HD static inline uint16_t
gnio_eng_csum(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, uint8_t *GNIO_RESTRICT pkt, uint32_t len,
		uint32_t pkt_len, uint16_t rx_port)
{
	return gnio_eng_csum_segs(ctx, pkt, len, pkt_len, rx_port, NULL, 0);
}

#endif
