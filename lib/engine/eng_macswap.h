/* SPDX-License-Identifier: BSD-3-Clause */
/** @file macswap: swap the Ethernet source and destination (testpmd "macswap"). */
#ifndef GNIO_ENG_MACSWAP_H
#define GNIO_ENG_MACSWAP_H

#include "gnio_eng_ctx.h"
#include "gnio_pkt.h"
#include "gnio_verdict.h"

GNIO_HD static inline uint16_t
gnio_eng_macswap(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, uint8_t *GNIO_RESTRICT pkt, uint32_t len,
		uint32_t pkt_len, uint16_t rx_port)
{
	(void)pkt_len;
	if (len < GNIO_ETH_HLEN)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	gnio_eth_swap_macs(pkt, len);
	return ctx->fwd_port[rx_port];
}

#endif
