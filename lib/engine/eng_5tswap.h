/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file 5tswap: swap source and destination of L2, and of L3 (IPv4, IPv6) and
 * L4 (UDP, TCP) where present (testpmd "5tswap"). Checksums stay valid: the
 * one's-complement sum does not depend on the order of the words.
 */
#ifndef GNIO_ENG_5TSWAP_H
#define GNIO_ENG_5TSWAP_H

#include "gnio_eng_ctx.h"
#include "gnio_pkt.h"
#include "gnio_verdict.h"

GNIO_HD static inline uint16_t
gnio_eng_5tswap(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, uint8_t *GNIO_RESTRICT pkt, uint32_t len,
		uint32_t pkt_len, uint16_t rx_port)
{
	uint16_t et = 0;
	uint32_t l3 = gnio_pkt_l3(pkt, len, &et);
	uint32_t l4 = 0;
	uint8_t proto = 0;

	if (l3 == 0)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (et == GNIO_ETH_IPV4) {
		uint32_t ihl = gnio_ipv4_hlen(pkt, len, pkt_len, l3);

		if (ihl == 0)
			return gnio_verdict_drop(GNIO_DROP_MALFORMED);
		proto = pkt[l3 + 9];
		if (!gnio_ipv4_is_later_fragment(pkt + l3))
			l4 = l3 + ihl;
	} else if (et == GNIO_ETH_IPV6) {
		if (len < l3 + 40)
			return gnio_verdict_drop(GNIO_DROP_MALFORMED);
		proto = pkt[l3 + 6];
		l4 = l3 + 40;
	}
	if (l4 != 0 && (proto == GNIO_IPPROTO_UDP || proto == GNIO_IPPROTO_TCP) && len < l4 + 4)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);

	gnio_eth_swap_macs(pkt, len);
	if (et == GNIO_ETH_IPV4)
		gnio_swap_bytes(pkt + l3 + 12, pkt + l3 + 16, 4);
	else if (et == GNIO_ETH_IPV6)
		gnio_swap_bytes(pkt + l3 + 8, pkt + l3 + 24, 16);
	if (l4 != 0 && (proto == GNIO_IPPROTO_UDP || proto == GNIO_IPPROTO_TCP))
		gnio_swap_bytes(pkt + l4, pkt + l4 + 2, 2);
	return ctx->fwd_port[rx_port];
}

#endif
