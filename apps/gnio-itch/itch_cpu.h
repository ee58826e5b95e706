/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's CPU path on the host consumer, as a program includes it: the
 * handler's item and packet functions (itch_state.h's packet function on each
 * packet, the state held while it runs, the next packet's lookups asked for
 * ahead), the gap timer the main lcore runs between packets, a re-request's
 * headers, and the options' forms shared by the programs that take the feed
 * (gnio-itch and gnio-trader: the same receiver and book on the same lcores).
 *
 * An includer may say, before including it, where each applied message goes
 * (ITCH_FEED_APPLY, itch_feed.h) and what is done as each packet starts
 * (ITCH_CPU_PACKET(st), nothing unless said), and the TX callback that trims
 * each re-request to its length (itch_trim_requests(), on every path). It
 * prints and exits on a bad option: for programs only.
 */
#ifndef GNIO_ITCH_CPU_H
#define GNIO_ITCH_CPU_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <gnio/gnio_handler.h>
#include <gnio/gnio_pipeline.h>

#include "gnio_app.h"
#include "itch_state.h"

#ifndef ITCH_CPU_PACKET
#define ITCH_CPU_PACKET(st) do { } while (0)
#endif

/* Option @p opt's value @p v: a power of two, 2 to 2^28; else one line and exit 2. */
static inline uint32_t
itch_opt_pow2(const char *app, const char *opt, const char *v)
{
	uint32_t x = (uint32_t)gnio_app_number(app, opt, v, 2, 1u << 28);

	if ((x & (x - 1)) != 0) {
		fprintf(stderr, "%s: %s=%s: must be a power of two\n", app, opt, v);
		exit(2);
	}
	return x;
}

/* Option @p opt's value @p v as IPv4:PORT into @p ip and @p port (host order); else one line and exit 2. */
static inline void
itch_opt_addr(const char *app, const char *opt, const char *v, uint32_t *ip, uint16_t *port)
{
	unsigned int a, b, c, d, p;
	char tail;

	if (sscanf(v, "%u.%u.%u.%u:%u%c", &a, &b, &c, &d, &p, &tail) != 5 || a > 255 || b > 255 ||
			c > 255 || d > 255 || p == 0 || p > 65535) {
		fprintf(stderr, "%s: %s=%s: expected IPv4:PORT\n", app, opt, v);
		exit(2);
	}
	*ip = a << 24 | b << 16 | c << 8 | d;
	*port = (uint16_t)p;
}

static inline uint16_t
itch_csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/*
 * The headers of a re-request (Ethernet, IPv4, UDP) into @p h, from @p src's MAC and
 * @p local_ip:@p local_port to @p req_ip:@p req_port, lengths and IPv4 checksum in.
 */
static inline void
itch_request_headers(uint8_t *h, uint32_t local_ip, uint16_t local_port, uint32_t req_ip, uint16_t req_port,
		const struct rte_ether_addr *src)
{
	uint32_t s = 0;

	memset(h, 0, ITCH_REQ_HDR);
	memcpy(h + 6, src->addr_bytes, 6);
	h[12] = 0x08;
	h[14] = 0x45;
	h[16] = 0;
	h[17] = 20 + 8 + ITCH_MOLD_HDR;
	h[20] = 0x40;                         /* DF */
	h[22] = 64;
	h[23] = 17;
	for (int i = 0; i < 4; i++) {
		h[26 + i] = (uint8_t)(local_ip >> (24 - 8 * i));
		h[30 + i] = (uint8_t)(req_ip >> (24 - 8 * i));
	}
	for (int i = 14; i < 34; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	s = itch_csum_fold(s);
	h[24] = (uint8_t)(s >> 8);
	h[25] = (uint8_t)s;
	h[34] = (uint8_t)(local_port >> 8);
	h[35] = (uint8_t)local_port;
	h[36] = (uint8_t)(req_port >> 8);
	h[37] = (uint8_t)req_port;
	h[39] = 8 + ITCH_MOLD_HDR;            /* UDP checksum 0: none (IPv4) */
}

/*
 * A TX callback on the pipeline's queues: a re-request is written over the
 * feed packet that showed the gap (itch_on_packet_sum()), whose length a
 * handler cannot change; the frame is trimmed here to its Ethernet header
 * and its IPv4 packet (the headers and the request), the segments after
 * that freed. Every packet of those queues is a re-request.
 */
static inline uint16_t
itch_trim_tx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t nb, void *arg)
{
	(void)port;
	(void)queue;
	(void)arg;
	for (uint16_t i = 0; i < nb; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t end;

		if (m->data_len < ITCH_REQ_HDR || h[12] != 0x08 || h[13] != 0x00)
			continue;
		end = 14 + ((uint32_t)h[16] << 8 | h[17]);
		if (end < ITCH_REQ_HDR || end >= m->pkt_len || end > m->data_len)
			continue;
		if (m->next != NULL) {
			rte_pktmbuf_free(m->next);
			m->next = NULL;
			m->nb_segs = 1;
		}
		m->data_len = (uint16_t)end;
		m->pkt_len = end;
	}
	return nb;
}

/*
 * itch_trim_tx() on the TX queues of pipeline @p p's @p nb ports that are
 * the pipeline's (not the application's own). 0, or -errno.
 */
static inline int
itch_trim_requests(const struct gnio_pipeline *p, const uint16_t *ports, uint16_t nb)
{
	for (uint16_t i = 0; i < nb; i++) {
		struct rte_eth_dev_info info;
		int app = gnio_pipeline_app_txq(p, ports[i]), ret = rte_eth_dev_info_get(ports[i], &info);
		uint16_t nq;

		if (ret != 0)
			return ret;
		nq = app >= 0 ? (uint16_t)app : info.nb_tx_queues;
		for (uint16_t q = 0; q < nq; q++)
			if (rte_eth_add_tx_callback(ports[i], q, itch_trim_tx, NULL) == NULL)
				return -rte_errno;
	}
	return 0;
}

static inline uint64_t
itch_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The CPU path's handler: the packet function of itch_state.h, timed by the CPU's clock. */
static inline uint16_t
itch_packet(struct gnio_pkt *pk, void *state)
{
	struct itch_state *st = state;

	st->feed.rx_tsc = gnio_handler_rx_tsc();
	ITCH_CPU_PACKET(st);
	return itch_on_packet(st, pk, itch_now_ns());
}

/* While a packet is applied, the next one's lookups are on their way (itch_ahead()). */
static inline void
itch_next(const struct gnio_pkt *pk, void *state)
{
	itch_ahead(state, pk);
}

/* An item's packets, one after another, the next one's lookups asked for ahead. */
static inline uint32_t
itch_item_loop(void *const *mbufs, uint32_t nb, uint16_t rx_port, uint16_t tx_port, uint16_t *verdicts,
		void *state)
{
	GNIO_HOST_ITEM_BODY_AHEAD(itch_packet, itch_next)
}

/* The CPU path's item, the state held while its packets are handled (itch_hold(): the gap timer between items). */
static inline uint32_t
itch_item(void *const *mbufs, uint32_t nb, uint16_t rx_port, uint16_t tx_port, uint16_t *verdicts, void *state)
{
	uint32_t r;

	itch_hold(state, ITCH_BUSY_WORKER);
	r = itch_item_loop(mbufs, nb, rx_port, tx_port, verdicts, state);
	itch_let_go(state);
	return r;
}

/* One packet, the state held. */
static inline uint16_t
itch_packet_held(struct gnio_pkt *pk, void *state)
{
	uint16_t v;

	itch_hold(state, ITCH_BUSY_WORKER);
	v = itch_packet(pk, state);
	itch_let_go(state);
	return v;
}

/*
 * The CPU paths' gap timer between packets, on the main lcore (@p st: the
 * state the worker lcore handles, host memory): a gap open longer than the
 * timeout is given up now, whether a packet comes or not (itch_feed_tick()).
 * The state is taken only when it is free (the worker's packets run the timer
 * themselves); the events of the messages it lets apply have no packet's RX
 * time (0).
 */
static inline void
itch_timer(struct itch_state *st)
{
	uint64_t since = __atomic_load_n(&st->feed.gap_since_ns, __ATOMIC_RELAXED), now = itch_now_ns();

	if (since == 0 || now - since <= st->feed.gap_timeout_ns || !itch_try_hold(st, ITCH_BUSY_MAIN))
		return;
	st->feed.rx_tsc = 0;
	itch_feed_tick(&st->feed, now);
	itch_let_go(st);
}

#endif /* GNIO_ITCH_CPU_H */
