/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file txonly: fill a fresh buffer with an Ethernet/IPv4/UDP packet of the
 * buffer's length (testpmd "txonly"): to the TX port's --eth-peer from its own
 * MAC, 198.18.0.1 -> 198.18.0.2, UDP 9 -> 9, TTL 64, zero payload.
 * The packet source allocates the buffers; nothing is received.
 */
#ifndef GNIO_ENG_TXONLY_H
#define GNIO_ENG_TXONLY_H

#include "gnio_eng_ctx.h"
#include "gnio_pkt.h"
#include "gnio_verdict.h"

/** Smallest txonly packet: Ethernet + IPv4 + UDP headers. */
#define GNIO_TXONLY_MIN_LEN 42u

GNIO_HD static inline uint16_t
gnio_eng_txonly(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, uint8_t *GNIO_RESTRICT pkt, uint32_t len,
		uint32_t pkt_len, uint16_t rx_port)
{
	uint16_t tx = ctx->fwd_port[rx_port];
	uint8_t *ip = pkt + 14;
	uint8_t *udp = pkt + 34;

	(void)pkt_len;      /* the source made a one-segment packet of len bytes */
	if (len < GNIO_TXONLY_MIN_LEN || len > 0xffffu)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	gnio_copy_bytes(pkt, ctx->peer_mac[tx], 6);
	gnio_copy_bytes(pkt + 6, ctx->port_mac[tx], 6);
	gnio_st_be16(pkt + 12, GNIO_ETH_IPV4);
	ip[0] = 0x45;
	ip[1] = 0;
	gnio_st_be16(ip + 2, (uint16_t)(len - 14));
	gnio_st_be16(ip + 4, 0);
	gnio_st_be16(ip + 6, 0);
	ip[8] = 64;
	ip[9] = GNIO_IPPROTO_UDP;
	gnio_st_be16(ip + 10, 0);
	gnio_st_be16(ip + 12, (uint16_t)(ctx->txonly_ip_src >> 16));
	gnio_st_be16(ip + 14, (uint16_t)ctx->txonly_ip_src);
	gnio_st_be16(ip + 16, (uint16_t)(ctx->txonly_ip_dst >> 16));
	gnio_st_be16(ip + 18, (uint16_t)ctx->txonly_ip_dst);
	gnio_st_be16(ip + 10, (uint16_t)~gnio_csum_fold(ip, 20, 0));
	gnio_st_be16(udp, ctx->txonly_udp_src);
	gnio_st_be16(udp + 2, ctx->txonly_udp_dst);
	gnio_st_be16(udp + 4, (uint16_t)(len - 34));
	gnio_st_be16(udp + 6, 0);
	for (uint32_t i = GNIO_TXONLY_MIN_LEN; i < len; i++)
		pkt[i] = 0;
	return tx;
}

#endif
