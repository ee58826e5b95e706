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
 *    first GNIO_CSUM_PLAN_WINDOW bytes (what the GPU plans on);
 *  - csum over the packet cut into segments (as chained mbufs, each segment in
 *    its own buffer, cut where the input says) gives the verdict it gives over
 *    the whole packet; with a segment missing that the sum needs, it is
 *    "unverified", never good; a packet made good (one payload word set so the
 *    sum is right) is good in segments too, and with one bit flipped anywhere
 *    in its payload, in any segment, it is bad_csum.
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

#define MAX_SEGS 8

/*
 * csum of @p pkt cut at @p cut[0..n-2] into segments, each in a buffer of its own size;
 * with @p skip > 0, the segments from that one on are not described.
 */
static uint16_t
csum_cut(const uint8_t *pkt, uint32_t len, uint16_t port, const uint32_t *cut, unsigned int n,
		int skip)
{
	struct gnio_seg segs[MAX_SEGS];
	uint8_t *buf[MAX_SEGS];
	unsigned int nb = 0;
	uint16_t v;

	for (unsigned int i = 0; i < n; i++) {
		uint32_t a = i == 0 ? 0 : cut[i - 1], b = i + 1 == n ? len : cut[i];

		buf[i] = malloc(b > a ? b - a : 1);
		if (buf[i] == NULL)
			abort();
		memcpy(buf[i], pkt + a, b - a);
		if (i > 0 && (skip < 0 || (int)i < skip)) {
			segs[nb].addr = buf[i];
			segs[nb].len = b - a;
			nb++;
		}
	}
	v = gnio_eng_csum_segs(&ctx, buf[0], n > 1 ? cut[0] : len, len, port, segs, nb);
	for (unsigned int i = 0; i < n; i++)
		free(buf[i]);
	return v;
}

static void
check_csum_segments(uint8_t *pkt, uint32_t len, uint16_t port, uint8_t salt)
{
	struct gnio_csum_plan plan;
	uint32_t cut[MAX_SEGS], x = salt * 2654435761u + len, end, w, sum;
	unsigned int n = 1;
	uint16_t whole, v, good;

	/* Cut points from the input: 1 to MAX_SEGS segments, some of them empty or one byte. */
	while (n < MAX_SEGS && len > 0 && (x >> 28) != 0) {
		uint32_t prev = n == 1 ? 0 : cut[n - 2];

		x = x * 1103515245u + 12345u;
		cut[n - 1] = prev + (x >> 8) % (len - prev + 1);
		n++;
	}
	whole = gnio_eng_csum_segs(&ctx, pkt, len, len, port, NULL, 0);
	v = csum_cut(pkt, len, port, cut, n, -1);
	/* Headers are read from the first segment only: cut inside them, the packet may be
	 * dropped (malformed), but never given another forwarding verdict. */
	if (n > 1 && cut[0] < (len < GNIO_CSUM_PLAN_WINDOW ? len : GNIO_CSUM_PLAN_WINDOW)) {
		if (v != whole && !gnio_verdict_is_drop(v))
			abort();
		return;
	}
	if (v != whole)
		abort();
	good = gnio_eng_csum_plan(&ctx, pkt, len, len, port, &plan);
	if (plan.n == 0)
		return;
	end = plan.off + plan.n;
	/* Segments left undescribed from one holding bytes of the sum on: never judged. */
	for (unsigned int k = 1; k < n; k++)
		if (cut[k - 1] < end && csum_cut(pkt, len, port, cut, n, (int)k) !=
				gnio_verdict_drop(GNIO_DROP_UNVERIFIED))
			abort();
	/* Make it good: set the last whole word of the sum past the headers the plan reads. */
	w = (end - 2) & ~1u;
	if (end < 2 || w < GNIO_CSUM_PLAN_WINDOW || w < plan.off)
		return;
	pkt[w] = 0;
	pkt[w + 1] = 0;
	sum = gnio_csum_fold32(gnio_csum_add(pkt + plan.off, plan.n, plan.sum));
	gnio_st_be16(pkt + w, (uint16_t)~sum);
	if (gnio_eng_csum_segs(&ctx, pkt, len, len, port, NULL, 0) != good ||
			csum_cut(pkt, len, port, cut, n, -1) != good || gnio_verdict_is_drop(good))
		abort();
	/* One bit flipped anywhere in the payload (past every header the plan reads), the
	 * segments as before: bad. */
	x = x * 1103515245u + 12345u;
	w = GNIO_CSUM_PLAN_WINDOW + (x >> 8) % (end - GNIO_CSUM_PLAN_WINDOW);
	pkt[w] ^= (uint8_t)(1u << (x & 7));
	v = csum_cut(pkt, len, port, cut, n, -1);
	if (v != gnio_verdict_drop(GNIO_DROP_BAD_CSUM))
		abort();
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
	if (id == GNIO_ENGINE_CSUM)
		check_csum_segments(pkt, len, port, data[1]);
	free(pkt);
	free(orig);
	return 0;
}
