/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-trader's model lcores: the queue of requests, the model, the signal packets (trader_serve.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_udp.h>

#include "gnio_app_udp.h"
#include "trader_serve.h"

/* @p fmt into @p err; -1. */
#define SV_FAIL(...) do { \
	snprintf(err, errlen, __VA_ARGS__); \
	return -1; \
} while (0)

/* The signal's headers of @p s's port, to @p a: Ethernet, IPv4 (its checksum in), UDP (checksum 0). */
static void
sv_headers(uint8_t *h, uint16_t port, const struct tr_signal_addr *a)
{
	struct rte_ether_addr mac;

	rte_eth_macaddr_get(port, &mac);
	gnio_app_udp_headers(h, &mac, &a->dst_mac, a->src_ip, a->src_port, a->dst_ip, a->dst_port,
			TR_SIGNAL_PAYLOAD, RTE_IPV4_HDR_DF_FLAG);
}

int
tr_serve_init(struct tr_serve *s, const struct tr_lstm *m, uint32_t cap, uint16_t port, uint16_t txq,
		const unsigned int *cpus, uint32_t nb, const struct tr_signal_addr *a, char *err, size_t errlen)
{
	int socket = rte_eth_dev_socket_id(port) < 0 ? SOCKET_ID_ANY : rte_eth_dev_socket_id(port);
	uint32_t nb_slots = cap + nb + 1, nb_mbufs;
	struct timespec ts;
	char name[RTE_RING_NAMESIZE];

	memset(s, 0, sizeof(*s));
	if (cap == 0 || cap > TR_SERVE_QUEUE_MAX || nb == 0 || nb > TR_SERVE_LCORES)
		SV_FAIL("a queue of 1 to %u requests and 1 to %u model lcores", TR_SERVE_QUEUE_MAX,
			TR_SERVE_LCORES);
	s->m = m;
	s->cap = cap;
	s->nb_lcores = nb;
	s->port = port;
	s->slot_bytes = (sizeof(struct tr_req) + (size_t)m->window * TR_F * sizeof(float) + 63) & ~(size_t)63;
	s->slots = aligned_alloc(64, nb_slots * s->slot_bytes);
	s->queue = rte_ring_create("tr_queue", cap, socket, RING_F_SP_ENQ | RING_F_EXACT_SZ);
	s->free = rte_ring_create("tr_free", nb_slots, socket, RING_F_SC_DEQ | RING_F_EXACT_SZ);
	/*
	 * A signal's buffer is back once its TX queue has sent it: each queue's descriptors, the
	 * pool's caches (one a model lcore) and some to spare.
	 */
	nb_mbufs = nb * (TR_SERVE_TXD + 2 * 64) + 512;
	s->mp = rte_pktmbuf_pool_create("tr_signals", nb_mbufs, 64, 0,
			RTE_PKTMBUF_HEADROOM + TR_SIGNAL_HDRS + TR_SIGNAL_PAYLOAD + 64, socket);
	if (s->slots == NULL || s->queue == NULL || s->free == NULL || s->mp == NULL)
		SV_FAIL("no memory for a queue of %u requests and the signals' buffers (%s)", cap,
			rte_strerror(rte_errno));
	memset(s->slots, 0, nb_slots * s->slot_bytes);
	for (uint32_t i = 0; i < nb_slots; i++)
		if (rte_ring_sp_enqueue(s->free, s->slots + i * s->slot_bytes) != 0)
			SV_FAIL("%s", "cannot fill the free slots' ring");
	for (uint32_t l = 0; l < nb; l++) {
		struct tr_model_lcore *lc = &s->lc[l];

		lc->s = s;
		lc->cpu = cpus[l];
		lc->txq = (uint16_t)(txq + l);
		snprintf(name, sizeof(name), "tr_results%u", l);
		lc->results = rte_ring_create_elem(name, sizeof(struct tr_result), TR_SERVE_RESULTS, socket,
				RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (lc->results == NULL)
			SV_FAIL("no memory for model lcore %u's results (%s)", l, rte_strerror(rte_errno));
		sv_headers(lc->hdr, port, a);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	s->tsc0 = rte_rdtsc();
	s->real0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	s->hz = rte_get_tsc_hz();
	return 0;
}

/*
 * The signal of result @p r (README.md, "The signal packet") on @p lc's TX
 * queue: its TX time when its payload is written, before its UDP checksum and
 * rte_eth_tx_burst(); a buffer short or a queue that does not take it is
 * counted (failed), never waited for.
 */
static void
sv_signal(struct tr_model_lcore *lc, struct tr_result *r)
{
	const struct tr_serve *s = lc->s;
	struct rte_mbuf *mb = rte_pktmbuf_alloc(s->mp);
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint8_t *h, *p;

	r->sent = 0;
	if (mb == NULL) {
		r->t_tx = r->t_sent = rte_rdtsc();
		lc->failed++;
		return;
	}
	h = (uint8_t *)rte_pktmbuf_append(mb, TR_SIGNAL_HDRS + TR_SIGNAL_PAYLOAD);
	memcpy(h, lc->hdr, TR_SIGNAL_HDRS);
	p = h + TR_SIGNAL_HDRS;
	p = gnio_app_put64(p, r->index);
	p = gnio_app_put64(p, r->seq);
	p[0] = (uint8_t)(r->locate >> 8);
	p[1] = (uint8_t)r->locate;
	p[2] = TR_OUT;
	p[3] = 0;
	p = gnio_app_put32(p + 4, s->m->hidden);
	p = gnio_app_put64(p, r->itch_ts);
	p = gnio_app_put64(p, tr_serve_real_ns(s, r->t_rx));
	for (uint32_t k = 0; k < TR_OUT; k++) {
		uint32_t b;

		memcpy(&b, &r->y[k], 4);
		gnio_app_put32(p + 8 + 4 * k, b);
	}
	gnio_app_put32(p + 8 + 4 * TR_OUT, 0);
	r->t_tx = rte_rdtsc();
	gnio_app_put64(p, tr_serve_real_ns(s, r->t_tx));
	ip = (struct rte_ipv4_hdr *)(h + sizeof(struct rte_ether_hdr));
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	if (rte_eth_tx_burst(s->port, lc->txq, &mb, 1) == 1) {
		r->sent = 1;
		lc->sent++;
	} else {
		rte_pktmbuf_free(mb);
		lc->failed++;
	}
	r->t_sent = rte_rdtsc();
}

/* A model lcore: requests off the queue, the model, the signal, the result to the main lcore. */
static uint32_t
sv_lcore(void *arg)
{
	struct tr_model_lcore *lc = arg;
	struct tr_serve *s = lc->s;
	const struct tr_lstm *m = s->m;

	if (rte_thread_register() != 0) {
		__atomic_store_n(&lc->ready, -1, __ATOMIC_RELEASE);
		__atomic_store_n(&lc->done, 1, __ATOMIC_RELEASE);
		return 1;
	}
	__atomic_store_n(&lc->ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		int stop = __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
		struct tr_result r;
		struct tr_req *q;
		void *obj;

		if (stop == TR_SERVE_NOW)
			break;
		if (rte_ring_mc_dequeue(s->queue, &obj) != 0) {
			/* (Draining, no request comes any more: empty is the end.) */
			if (stop == TR_SERVE_DRAIN)
				break;
			rte_pause();
			continue;
		}
		r.t_deq = rte_rdtsc();
		q = obj;
		tr_lstm_cpu(m, (const float (*)[TR_F])q->win, r.y);
		r.t_model = rte_rdtsc();
		r.index = q->index;
		r.seq = q->seq;
		r.itch_ts = q->itch_ts;
		r.t_rx = q->t_rx;
		r.t_pkt = q->t_pkt;
		r.t_book = q->t_book;
		r.t_enq = q->t_enq;
		r.locate = q->locate;
		r.pad = 0;
		rte_ring_mp_enqueue(s->free, q);
		sv_signal(lc, &r);
		lc->made++;
		/* (The main lcore drains every ring until every model lcore is done.) */
		while (rte_ring_sp_enqueue_elem(lc->results, &r, sizeof(r)) != 0) {
			lc->waits++;
			rte_pause();
		}
	}
	rte_thread_unregister();
	__atomic_store_n(&lc->done, 1, __ATOMIC_RELEASE);
	return 0;
}

int
tr_serve_start(struct tr_serve *s, char *err, size_t errlen)
{
	for (uint32_t l = 0; l < s->nb_lcores; l++) {
		struct tr_model_lcore *lc = &s->lc[l];
		rte_thread_attr_t attr;
		rte_cpuset_t cpus;
		int r;

		CPU_ZERO(&cpus);
		CPU_SET(lc->cpu, &cpus);
		rte_thread_attr_init(&attr);
		rte_thread_attr_set_affinity(&attr, &cpus);
		r = rte_thread_create(&lc->tid, &attr, sv_lcore, lc);
		if (r != 0) {
			tr_serve_stop(s, TR_SERVE_NOW);
			tr_serve_join(s);
			SV_FAIL("cannot start model lcore %u on CPU %u: %s", l, lc->cpu, strerror(r));
		}
		lc->launched = true;
	}
	/* Each registered with the EAL (an lcore id of its own), or the reason it is not. */
	for (uint32_t l = 0; l < s->nb_lcores; l++) {
		uint64_t t0 = rte_get_timer_cycles();

		while (__atomic_load_n(&s->lc[l].ready, __ATOMIC_ACQUIRE) == 0 &&
				rte_get_timer_cycles() - t0 < 10 * rte_get_timer_hz())
			rte_delay_us_sleep(100);
		if (__atomic_load_n(&s->lc[l].ready, __ATOMIC_ACQUIRE) != 1) {
			tr_serve_stop(s, TR_SERVE_NOW);
			tr_serve_join(s);
			SV_FAIL("model lcore %u on CPU %u could not register with the EAL (RTE_MAX_LCORE lcores "
				"in use?)", l, s->lc[l].cpu);
		}
	}
	return 0;
}

void
tr_serve_stop(struct tr_serve *s, int how)
{
	__atomic_store_n(&s->stop, how, __ATOMIC_RELEASE);
}

bool
tr_serve_done(const struct tr_serve *s)
{
	for (uint32_t l = 0; l < s->nb_lcores; l++)
		if (s->lc[l].launched && __atomic_load_n(&s->lc[l].done, __ATOMIC_ACQUIRE) == 0)
			return false;
	return true;
}

void
tr_serve_join(struct tr_serve *s)
{
	for (uint32_t l = 0; l < s->nb_lcores; l++)
		if (s->lc[l].launched) {
			rte_thread_join(s->lc[l].tid, NULL);
			s->lc[l].launched = false;
		}
}

uint32_t
tr_serve_results(struct tr_serve *s, struct tr_result *out, uint32_t n)
{
	uint32_t got = 0;

	for (uint32_t l = 0; l < s->nb_lcores && got < n; l++)
		got += rte_ring_sc_dequeue_burst_elem(s->lc[l].results, out + got, sizeof(*out), n - got, NULL);
	return got;
}

uint64_t
tr_serve_abandon(struct tr_serve *s)
{
	uint64_t n = 0;
	void *obj;

	while (rte_ring_sc_dequeue(s->queue, &obj) == 0) {
		rte_ring_mp_enqueue(s->free, obj);
		n++;
	}
	return n;
}

void
tr_serve_free(struct tr_serve *s)
{
	for (uint32_t l = 0; l < s->nb_lcores; l++)
		rte_ring_free(s->lc[l].results);
	rte_ring_free(s->queue);
	rte_ring_free(s->free);
	rte_mempool_free(s->mp);
	free(s->slots);
	s->slots = NULL;
}
