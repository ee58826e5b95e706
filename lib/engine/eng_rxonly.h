/* SPDX-License-Identifier: BSD-3-Clause */
/** @file rxonly: receive and drop, counted under the reason "rxonly" (testpmd "rxonly"). */
#ifndef GNIO_ENG_RXONLY_H
#define GNIO_ENG_RXONLY_H

#include "gnio_eng_ctx.h"
#include "gnio_verdict.h"

GNIO_HD static inline uint16_t
gnio_eng_rxonly(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, uint8_t *GNIO_RESTRICT pkt, uint32_t len,
		uint32_t pkt_len, uint16_t rx_port)
{
	(void)ctx;
	(void)pkt;
	(void)len;
	(void)pkt_len;
	(void)rx_port;
	return gnio_verdict_drop(GNIO_DROP_RXONLY);
}

#endif
