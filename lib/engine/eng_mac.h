/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mac: rewrite the Ethernet addresses for the TX port (testpmd "mac"):
 * destination = the TX port's --eth-peer, source = the TX port's MAC.
 */
#ifndef GNIO_ENG_MAC_H
#define GNIO_ENG_MAC_H

#include "gnio_eng_ctx.h"
#include "gnio_pkt.h"
#include "gnio_verdict.h"

GNIO_HD static inline uint16_t
gnio_eng_mac(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, uint8_t *GNIO_RESTRICT pkt, uint32_t len,
		uint32_t pkt_len, uint16_t rx_port)
{
	uint16_t tx = ctx->fwd_port[rx_port];

	(void)pkt_len;

	if (len < GNIO_ETH_HLEN)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	gnio_eth_set_macs(pkt, len, ctx->peer_mac[tx], ctx->port_mac[tx]);
	return tx;
}

#endif
