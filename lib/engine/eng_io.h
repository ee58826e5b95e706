/* SPDX-License-Identifier: BSD-3-Clause */
/** @file io: forward every packet unchanged to the paired port (testpmd "io"). */
#ifndef GNIO_ENG_IO_H
#define GNIO_ENG_IO_H

#include "gnio_eng_ctx.h"

GNIO_HD static inline uint16_t
gnio_eng_io(const struct gnio_eng_ctx *GNIO_RESTRICT ctx, uint8_t *GNIO_RESTRICT pkt, uint32_t len,
		uint32_t pkt_len, uint16_t rx_port)
{
	(void)pkt;
	(void)len;
	(void)pkt_len;
	return ctx->fwd_port[rx_port];
}

#endif
