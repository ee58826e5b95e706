/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for every GNIO_HD engine (built by clang with ASan and
 * UBSan; engines are pure headers, so no DPDK here). Input: engine selector,
 * RX port, then the packet, copied into a buffer of exactly its length so any
 * read or write outside the packet is caught. Checks, beyond "no crash":
 *  - every verdict is a valid drop reason or a port the topology allows;
 *  - io never changes a packet; macswap and 5tswap applied twice give the
 *    packet back (when they forward it);
 *  - rxonly always drops as "rxonly";
 *  - csum never changes a packet, and plans the same from a copy of only its
 *    first GNIO_CSUM_PLAN_WINDOW bytes (what the GPU plans on).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gnio_engine_list.h"

static struct gnio_eng_ctx ctx;

static void
ctx_init(void)
{
	for (int p = 0; p < GNIO_MAX_PORTS; p++) {
		ctx.fwd_port[p] = (uint16_t)(p ^ 1);
		for (int b = 0; b < 6; b++) {
			ctx.port_mac[p][b] = (uint8_t)(0x10 + p + b);
			ctx.peer_mac[p][b] = (uint8_t)(0x20 + p + b);
		}
	}
	ctx.nb_ports = GNIO_MAX_PORTS;
	ctx.txonly_ip_src = 0xc6120001;
	ctx.txonly_ip_dst = 0xc6120002;
	ctx.txonly_udp_src = 9;
	ctx.txonly_udp_dst = 9;
}

static void
check_verdict(uint16_t v, uint16_t rx_port)
{
	if (gnio_verdict_is_drop(v)) {
		if ((v & ~GNIO_VERDICT_DROP_BIT) >= GNIO_DROP_MAX)
			abort();
	} else if (v != rx_port && v != ctx.fwd_port[rx_port]) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int id;
	uint16_t port, v, v2;
	uint32_t len, pkt_len;
	uint8_t *pkt, *orig;

	if (size < 2)
		return 0;
	if (ctx.nb_ports == 0)
		ctx_init();
	id = data[0] % GNIO_ENGINE_MAX;
	port = (uint16_t)(data[1] % GNIO_MAX_PORTS);
	len = (uint32_t)(size - 2);
	/* The packet may be longer than what can be read (a chained mbuf): up to 8 KiB more. */
	pkt_len = len + ((data[0] & 0x80) ? (uint32_t)data[1] * 32u : 0u);
	pkt = malloc(len ? len : 1);
	orig = malloc(len ? len : 1);
	if (pkt == NULL || orig == NULL)
		abort();
	memcpy(pkt, data + 2, len);
	memcpy(orig, data + 2, len);
	v = gnio_engine_run(id, &ctx, pkt, len, pkt_len, port);
	check_verdict(v, port);
	switch (id) {
	case GNIO_ENGINE_IO:
		if (gnio_verdict_is_drop(v) || memcmp(pkt, orig, len) != 0)
			abort();
		break;
	case GNIO_ENGINE_RXONLY:
		if (v != gnio_verdict_drop(GNIO_DROP_RXONLY))
			abort();
		break;
	case GNIO_ENGINE_MACSWAP:
	case GNIO_ENGINE_5TSWAP:
		if (!gnio_verdict_is_drop(v)) {
			v2 = gnio_engine_run(id, &ctx, pkt, len, pkt_len, port);
			if (v2 != v || memcmp(pkt, orig, len) != 0)
				abort();
		}
		break;
	case GNIO_ENGINE_CSUM: {
		/* Never changes a packet; its plan reads only the first GNIO_CSUM_PLAN_WINDOW bytes
		 * (the GPU plans on a copy of those): same plan from a buffer of just them. */
		uint32_t wl = len < GNIO_CSUM_PLAN_WINDOW ? len : GNIO_CSUM_PLAN_WINDOW;
		uint8_t *win = malloc(wl ? wl : 1);
		struct gnio_csum_plan a, b;
		uint16_t va, vb;

		if (win == NULL || memcmp(pkt, orig, len) != 0)
			abort();
		memcpy(win, pkt, wl);
		va = gnio_eng_csum_plan(&ctx, pkt, len, pkt_len, port, &a);
		vb = gnio_eng_csum_plan(&ctx, win, len, pkt_len, port, &b);
		if (va != vb || a.n != b.n || (a.n != 0 && (a.off != b.off || a.sum != b.sum)))
			abort();
		free(win);
		break;
	}
	default:
		break;
	}
	free(pkt);
	free(orig);
	return 0;
}
