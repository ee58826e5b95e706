/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path: rx_burst (or allocation, for generating engines) into burst queues. */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "pipeline_priv.h"

/* Reserve up to @p want packets of the --max-packets budget. */
static inline uint32_t
rx_reserve(struct gnio_pipeline *p, uint32_t want)
{
	int64_t left, take;

	if (p->conf.max_packets == 0)
		return want;
	left = __atomic_load_n(&p->budget, __ATOMIC_RELAXED);
	do {
		if (left <= 0)
			return 0;
		take = left < want ? left : want;
	} while (!__atomic_compare_exchange_n(&p->budget, &left, left - take, false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return (uint32_t)take;
}

static inline void
rx_unreserve(struct gnio_pipeline *p, uint32_t n)
{
	if (p->conf.max_packets != 0 && n != 0)
		__atomic_fetch_add(&p->budget, n, __ATOMIC_RELAXED);
}

static inline uint16_t
rx_generate(struct gnio_pipeline *p, const struct gnio_mem_pool *pool, struct rte_mbuf **pkts,
		uint16_t n)
{
	if (rte_pktmbuf_alloc_bulk(gnio_mem_pool_mp(pool), pkts, n) != 0)
		return 0;
	for (uint16_t i = 0; i < n; i++) {
		pkts[i]->data_len = p->conf.txpkts;
		pkts[i]->pkt_len = p->conf.txpkts;
	}
	return n;
}

/*
 * --rx-pps: is a burst due on this queue? Paced receive publishes every burst
 * (the next one is not due yet), and publishes what is held while waiting.
 * A queue that fell behind (a stall) restarts from now: no catch-up burst.
 */
static inline bool
rx_due(struct gnio_pipeline *p, struct pl_rxq *rq)
{
	uint64_t now = rte_rdtsc();

	if (now < rq->next_tsc) {
		if (p->flush_cycles == 0)
			gnio_burstq_publish(rq->bq);
		return false;
	}
	if (now - rq->next_tsc > ((uint64_t)p->conf.burst * p->pace_q16 >> 16)) {
		rq->next_tsc = now;
		rq->next_frac = 0;
	}
	return true;
}

/* The next burst is due once the time of these @p n packets has passed. */
static inline void
rx_paced(struct gnio_pipeline *p, struct pl_rxq *rq, uint32_t n)
{
	uint64_t t = rq->next_frac + n * p->pace_q16;

	rq->next_tsc += t >> 16;
	rq->next_frac = t & 0xffff;
}

unsigned int
pl_rx_step(struct gnio_pipeline *p, struct pl_lcore *lc, struct pl_rxq *rq)
{
	struct rte_mbuf *pkts[RTE_GPU_COMM_LIST_PKTS_MAX];
	struct rte_mbuf **slots;
	struct gnio_burstq *bq = rq->bq;
	uint32_t room, want;
	uint16_t n;

	if (unlikely(__atomic_load_n(&p->port_down[rq->port], __ATOMIC_RELAXED))) {
		/* Stopped port: publish what is held, receive nothing. */
		gnio_burstq_publish(bq);
		return 0;
	}
	if (p->pace_q16 != 0 && !rx_due(p, rq))
		return 0;

	slots = gnio_burstq_slots(bq, rq->port, &room);
	if (slots == NULL) {
		if (p->conf.overload == GNIO_OVERLOAD_BACKPRESSURE || p->conf.engine->generates)
			return 0;
		/* Ring full: receive and drop, counted, so the NIC is not blamed. */
		want = rx_reserve(p, p->conf.burst);
		n = want ? rte_eth_rx_burst(rq->port, rq->queue, pkts, (uint16_t)want) : 0;
		rx_unreserve(p, want - n);
		if (n != 0) {
			rte_pktmbuf_free_bulk(pkts, n);
			lc->cnt.rx[rq->port] += n;
			lc->cnt.drops[rq->port][GNIO_DROP_RING_FULL] += n;
		}
		rx_paced(p, rq, n);
		return n;
	}
	want = rx_reserve(p, RTE_MIN(room, (uint32_t)p->conf.burst));
	if (want == 0)
		n = 0;
	else if (p->conf.engine->generates)
		n = rx_generate(p, p->gpu[rq->gpu].pool, slots, (uint16_t)want);
	else
		n = rte_eth_rx_burst(rq->port, rq->queue, slots, (uint16_t)want);
	rx_unreserve(p, want - n);
	if (n != 0) {
		/* The one timestamp of a burst: when rx_burst returned it (latency start). */
		gnio_burstq_commit(bq, n, rq->port, rte_rdtsc());
		lc->cnt.rx[rq->port] += n;
	}
	/*
	 * Publish a partial item when the queue came back short (drained: nothing
	 * more is waiting, so waiting longer only adds latency), or, with
	 * --flush-us, once its oldest packet has waited that long.
	 */
	if (gnio_burstq_pending(bq) != 0 && (p->flush_cycles == 0 ? n < want || p->pace_q16 != 0 :
			rte_rdtsc() - gnio_burstq_pending_since(bq) >= p->flush_cycles))
		gnio_burstq_publish(bq);
	/* Paced: the next burst is due once these packets' time has passed. */
	rx_paced(p, rq, n);
	return n;
}

void
pl_rx_stop(struct gnio_pipeline *p, struct pl_lcore *lc)
{
	RTE_SET_USED(p);
	for (uint16_t i = 0; i < lc->nb_rxq; i++)
		gnio_burstq_publish(lc->rxq[i]->bq);
	__atomic_store_n(&lc->rx_stopped, 1, __ATOMIC_RELEASE);
}
