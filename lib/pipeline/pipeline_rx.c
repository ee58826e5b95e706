/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path: rx_burst (or allocation, for generating handlers) into burst queues. */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "pipeline_core.h"

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
 * --rx-pps: how many packets are due on this queue now, at most @p most (0:
 * the next one is not due yet). Pacing is per packet: a burst is cut to the
 * packets whose time has come, so the offered load is the asked rate at any
 * rate. Paced receive publishes what is held while waiting (with --flush-us:
 * after that long). A queue that falls behind (its lcore was busy completing)
 * catches up a burst at a time; one that fell more than PL_PACE_BEHIND_US (or
 * a burst's time) behind, a stall (its lcore was not running: another process
 * on its CPU), restarts from now, and the packets whose time passed are
 * counted as skipped, not offered: the offered load is what the CPU allowed,
 * and says so.
 */
static inline uint32_t
rx_due(struct gnio_pipeline *p, struct pl_lcore *lc, struct pl_rxq *rq, uint32_t most)
{
	uint64_t now = rte_rdtsc(), behind, due;

	if (now < rq->next_tsc) {
		if (p->flush_cycles == 0 || (gnio_burstq_pending(rq->bq) != 0 &&
				now - gnio_burstq_pending_since(rq->bq) >= p->flush_cycles))
			gnio_burstq_publish(rq->bq);
		return 0;
	}
	behind = now - rq->next_tsc;
	if (behind > p->pace_behind) {
		pl_count(&lc->cnt.pace_skipped, ((behind << 16) + rq->next_frac) / p->pace_q16);
		pl_count(&lc->cnt.pace_stalls, 1);
		rq->next_tsc = now;
		rq->next_frac = 0;
		behind = 0;
	}
	due = ((behind << 16) + rq->next_frac) / p->pace_q16 + 1;
	return due < most ? (uint32_t)due : most;
}

/* The next packet is due once the time of these @p n packets has passed. */
static inline void
rx_paced(struct gnio_pipeline *p, struct pl_rxq *rq, uint32_t n)
{
	uint64_t t = rq->next_frac + n * p->pace_q16;

	rq->next_tsc += t >> 16;
	rq->next_frac = t & 0xffff;
}

/*
 * The first packets of a queue since start: note when the first of the pipeline
 * came (fault detection is timed from it), and whether --prefill packets come
 * cut short by the port (they would all be malformed).
 */
static __rte_noinline void
rx_first(struct gnio_pipeline *p, struct pl_rxq *rq, struct rte_mbuf *const *pkts, uint16_t n)
{
	uint64_t zero = 0;

	rq->seen = true;
	__atomic_compare_exchange_n(&p->first_rx_tsc, &zero, rte_rdtsc(), false, __ATOMIC_RELAXED,
			__ATOMIC_RELAXED);
	for (uint16_t i = 0; p->conf.prefill_len != 0 && i < n; i++)
		if (pkts[i]->pkt_len < p->conf.prefill_len) {
			__atomic_store_n(&p->prefill_short, (uint64_t)rq->port << 32 | pkts[i]->pkt_len,
					__ATOMIC_RELAXED);
			break;
		}
}

unsigned int
pl_rx_step(struct gnio_pipeline *p, struct pl_lcore *lc, struct pl_rxq *rq)
{
	struct rte_mbuf *pkts[RTE_GPU_COMM_LIST_PKTS_MAX];
	struct rte_mbuf **slots;
	struct gnio_burstq *bq = rq->bq;
	uint32_t room, most = p->conf.burst, want;
	uint16_t n;

	if (unlikely(__atomic_load_n(&p->port_down[rq->port], __ATOMIC_RELAXED))) {
		/* Stopped port: publish what is held, receive nothing. */
		gnio_burstq_publish(bq);
		return 0;
	}
	if (p->pace_q16 != 0) {
		most = rx_due(p, lc, rq, most);
		if (most == 0)
			return 0;
	}

	slots = gnio_burstq_slots(bq, rq->port, &room);
	if (slots == NULL) {
		if (p->conf.overload == GNIO_OVERLOAD_BACKPRESSURE || p->rx_generates)
			return 0;
		/* Ring full: receive and drop, counted, so the NIC is not blamed. */
		want = rx_reserve(p, most);
		n = want ? rte_eth_rx_burst(rq->port, rq->queue, pkts, (uint16_t)want) : 0;
		rx_unreserve(p, want - n);
		if (n != 0) {
			pl_count(&lc->cnt.rx[rq->port], n);
			pl_count(&lc->cnt.drops[rq->port][GNIO_DROP_RING_FULL], n);
			rte_pktmbuf_free_bulk(pkts, n);
		}
		rx_paced(p, rq, n);
		return n;
	}
	most = RTE_MIN(room, most);
	want = rx_reserve(p, most);
	if (want == 0)
		n = 0;
	else if (p->rx_generates)
		n = rx_generate(p, p->gpu[rq->gpu].pool, slots, (uint16_t)want);
	else
		n = rte_eth_rx_burst(rq->port, rq->queue, slots, (uint16_t)want);
	rx_unreserve(p, want - n);
	if (unlikely(n != 0 && !rq->seen))
		rx_first(p, rq, slots, n);
	if (n != 0) {
		/* Counted before the item can be published: a snapshot never sees it processed first. */
		pl_count(p->rx_generates ? &lc->cnt.gen[rq->port] : &lc->cnt.rx[rq->port], n);
		/*
		 * The one timestamp of an item: when rx_burst returned its first packets
		 * (latency start); later bursts of the item do not need one, but in
		 * flagged lines every packet carries its burst's (gnio_lines_rx_tsc()).
		 */
		gnio_burstq_commit(bq, n, rq->port, gnio_burstq_pending(bq) == 0 || p->conf.inline_bytes != 0 ?
				rte_rdtsc() : 0);
	}
	/*
	 * Publish a partial item when the queue came back short (drained: nothing
	 * more is waiting, so waiting longer only adds latency), when --max-packets
	 * is reached (nothing more will come), or, with --flush-us, once its oldest
	 * packet has waited that long.
	 */
	if (gnio_burstq_pending(bq) != 0 && (want < most || (p->flush_cycles == 0 ?
			n < want || p->pace_q16 != 0 :
			rte_rdtsc() - gnio_burstq_pending_since(bq) >= p->flush_cycles)))
		gnio_burstq_publish(bq);
	/* Paced: the next burst is due once these packets' time has passed. */
	if (p->pace_q16 != 0)
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
