/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file icmpecho: answer ARP requests and ICMPv4 echo requests on the port they
 * came in on; drop everything else as "not_handled" (testpmd "icmpecho").
 * Up to two VLAN/QinQ tags are kept as they are.
 */
#ifndef GNIO_ENG_ICMPECHO_H
#define GNIO_ENG_ICMPECHO_H

#include "gnio_eng_ctx.h"
#include "gnio_pkt.h"
#include "gnio_verdict.h"

GNIO_HD static inline uint16_t
gnio_eng_icmpecho_arp(const struct gnio_eng_ctx *ctx, uint8_t *pkt, uint32_t len,
		uint32_t l3, uint16_t rx_port)
{
	uint8_t *arp = pkt + l3;
	uint8_t ip[4];

	if (len < l3 + 28)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (gnio_ld_be16(arp) != 1 || gnio_ld_be16(arp + 2) != GNIO_ETH_IPV4 ||
			arp[4] != 6 || arp[5] != 4 || gnio_ld_be16(arp + 6) != 1)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	/* Ethernet: back to the asker, from us. */
	gnio_copy_bytes(pkt, pkt + 6, 6);
	gnio_copy_bytes(pkt + 6, ctx->port_mac[rx_port], 6);
	/* ARP: reply; target = the asker, sender = us with the IP asked for. */
	gnio_st_be16(arp + 6, 2);
	gnio_copy_bytes(ip, arp + 24, 4);
	gnio_copy_bytes(arp + 18, arp + 8, 6);
	gnio_copy_bytes(arp + 24, arp + 14, 4);
	gnio_copy_bytes(arp + 8, ctx->port_mac[rx_port], 6);
	gnio_copy_bytes(arp + 14, ip, 4);
	return rx_port;
}

GNIO_HD static inline uint16_t
gnio_eng_icmpecho(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, uint8_t *GNIO_RESTRICT pkt, uint32_t len,
		uint32_t pkt_len, uint16_t rx_port)
{
	uint16_t et = 0;
	uint32_t l3 = gnio_pkt_l3(pkt, len, &et);
	uint32_t ihl, l4;
	uint8_t *icmp;

	if (l3 == 0)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (et == GNIO_ETH_ARP)
		return gnio_eng_icmpecho_arp(ctx, pkt, len, l3, rx_port);
	if (et != GNIO_ETH_IPV4)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	ihl = gnio_ipv4_hlen(pkt, len, pkt_len, l3);
	if (ihl == 0)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (pkt[l3 + 9] != GNIO_IPPROTO_ICMP || gnio_ipv4_is_later_fragment(pkt + l3))
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	l4 = l3 + ihl;
	if (len < l4 + 8)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	icmp = pkt + l4;
	if (icmp[0] != 8 || icmp[1] != 0)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);

	gnio_eth_swap_macs(pkt, len);
	gnio_swap_bytes(pkt + l3 + 12, pkt + l3 + 16, 4);
	icmp[0] = 0;
	gnio_st_be16(icmp + 2, gnio_csum_update16(gnio_ld_be16(icmp + 2), 0x0800, 0x0000));
	return rx_port;
}

#endif
