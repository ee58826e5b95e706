/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The one table of forwarding engines, and the dispatch from an engine id to
 * its per-packet function. Pure header (host and device).
 *
 * Adding an engine: write eng_<name>.h with a GNIO_HD function
 * gnio_eng_<name>(ctx, pkt, len, pkt_len, rx_port) returning a verdict: @p len
 * bytes at @p pkt can be read and written (the first segment), @p pkt_len is
 * the whole packet's length (for header consistency checks); include it
 * below, add one X line, and list the header in meson.build.
 */
#ifndef GNIO_ENGINE_LIST_H
#define GNIO_ENGINE_LIST_H

#include "eng_io.h"
#include "eng_mac.h"
#include "eng_macswap.h"
#include "eng_5tswap.h"
#include "eng_rxonly.h"
#include "eng_icmpecho.h"
#include "eng_txonly.h"
#include "eng_csum.h"

/** X(ENUM, name, generates, help); "generates": packets come from the pool, not from RX. */
#define GNIO_ENGINES(X) \
	X(IO, io, 0, "forward every packet unchanged to the paired port") \
	X(MAC, mac, 0, "set destination to --eth-peer and source to the TX port's MAC") \
	X(MACSWAP, macswap, 0, "swap the Ethernet source and destination") \
	X(5TSWAP, 5tswap, 0, "swap source and destination of L2, L3 and L4") \
	X(RXONLY, rxonly, 0, "receive and drop") \
	X(ICMPECHO, icmpecho, 0, "answer ARP and ICMP echo requests") \
	X(TXONLY, txonly, 1, "generate UDP packets of --txpkts bytes") \
	X(CSUM, csum, 0, "verify IPv4 and TCP/UDP checksums over every byte, forward the good ones")

/** Engine ids, in table order. */
enum gnio_engine_id {
#define GNIO_X_ENUM(e, n, g, h) GNIO_ENGINE_ ## e,
	GNIO_ENGINES(GNIO_X_ENUM)
#undef GNIO_X_ENUM
	GNIO_ENGINE_MAX
};

/** Run engine @p id on one packet; an unknown id drops the packet. */
GNIO_HD static inline uint16_t
gnio_engine_run(unsigned int id, const struct gnio_eng_ctx *ctx, uint8_t *pkt, uint32_t len,
		uint32_t pkt_len, uint16_t rx_port)
{
	switch (id) {
#define GNIO_X_CASE(e, n, g, h) \
	case GNIO_ENGINE_ ## e: \
		return gnio_eng_ ## n(ctx, pkt, len, pkt_len, rx_port);
	GNIO_ENGINES(GNIO_X_CASE)
#undef GNIO_X_CASE
	default:
		return gnio_verdict_drop(GNIO_DROP_CONSUMER);
	}
}

#endif /* GNIO_ENGINE_LIST_H */
