/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion path: act on the consumer's verdicts, in order, then free the item. */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "pipeline_core.h"

int
pl_comp_alloc(struct pl_comp *cs, uint16_t burst, int socket)
{
	for (uint16_t i = 0; i < GNIO_MAX_PORTS; i++) {
		cs->tx_pkts[i] = rte_zmalloc_socket("gnio_comp", sizeof(void *) * burst, 0, socket);
		if (cs->tx_pkts[i] == NULL)
			return -ENOMEM;
	}
	cs->drop_pkts = rte_zmalloc_socket("gnio_comp", sizeof(void *) * burst, 0, socket);
	return cs->drop_pkts == NULL ? -ENOMEM : 0;
}

void
pl_comp_free(struct pl_comp *cs)
{
	for (uint16_t i = 0; i < GNIO_MAX_PORTS; i++) {
		rte_free(cs->tx_pkts[i]);
		cs->tx_pkts[i] = NULL;
	}
	rte_free(cs->drop_pkts);
	cs->drop_pkts = NULL;
}

static inline void
comp_send(struct pl_lcore *lc, struct pl_comp *cs, uint16_t port, uint16_t rx_port,
		struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = 0;

	for (int tries = 0; sent < n && tries < PL_TX_RETRIES; tries++)
		sent += rte_eth_tx_burst(port, cs->txq, pkts + sent, n - sent);
	pl_count(&lc->cnt.tx[port], sent);
	if (sent < n) {
		pl_count(&lc->cnt.drops[rx_port][GNIO_DROP_TX_FULL], n - sent);
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
}

static inline void
comp_tx(struct pl_lcore *lc, struct pl_comp *cs, uint16_t port, uint16_t rx_port)
{
	comp_send(lc, cs, port, rx_port, cs->tx_pkts[port], cs->tx_n[port]);
	cs->tx_n[port] = 0;
}

/* The consumer said every packet of the item goes to one port: send the item's own array. */
static inline bool
comp_item_one_port(struct gnio_pipeline *p, struct pl_lcore *lc, struct pl_comp *cs,
		const struct gnio_bq_done *d)
{
	uint32_t v = d->uniform & ~GNIO_BQ_UNIFORM;

	if (d->status != GNIO_BQ_DONE || !(d->uniform & GNIO_BQ_UNIFORM) ||
			v >= GNIO_MAX_PORTS || !p->port_fwd[v] ||
			__atomic_load_n(&p->port_down[v], __ATOMIC_RELAXED))
		return false;
	comp_send(lc, cs, (uint16_t)v, d->rx_port, d->mbufs, (uint16_t)d->nb);
	return true;
}

static void
comp_item(struct gnio_pipeline *p, struct pl_lcore *lc, struct pl_comp *cs,
		const struct gnio_bq_done *d)
{
	uint16_t touched[GNIO_MAX_PORTS];
	uint16_t nb_touched = 0;
	uint16_t nb_drop = 0;
	uint16_t rx = d->rx_port;

	if (d->nb != 0 && comp_item_one_port(p, lc, cs, d))
		return;
	for (uint32_t i = 0; i < d->nb; i++) {
		uint16_t v = d->status == GNIO_BQ_DONE ? d->verdicts[i] :
			gnio_verdict_drop((enum gnio_drop_reason)d->fail_reason);

		if (!gnio_verdict_is_drop(v) && (v >= GNIO_MAX_PORTS || !p->port_fwd[v] ||
				__atomic_load_n(&p->port_down[v], __ATOMIC_RELAXED)))
			v = gnio_verdict_drop(GNIO_DROP_NO_ROUTE);
		if (gnio_verdict_is_drop(v)) {
			pl_count(&lc->cnt.drops[rx][gnio_verdict_reason(v)], 1);
			cs->drop_pkts[nb_drop++] = d->mbufs[i];
			continue;
		}
		if (cs->tx_n[v] == 0)
			touched[nb_touched++] = v;
		cs->tx_pkts[v][cs->tx_n[v]++] = d->mbufs[i];
	}
	for (uint16_t i = 0; i < nb_touched; i++)
		comp_tx(lc, cs, touched[i], rx);
	if (nb_drop != 0)
		rte_pktmbuf_free_bulk(cs->drop_pkts, nb_drop);
}

unsigned int
pl_comp_step(struct gnio_pipeline *p, struct pl_lcore *lc, struct pl_comp *cs)
{
	struct gnio_bq_done d;
	unsigned int items = 0;
	uint64_t seen = 0;

	for (uint16_t i = 0; i < cs->nb_bq; i++) {
		struct gnio_burstq *bq = cs->bq[i];

		/*
		 * No prefetch of the item's mbuf headers before the PMD frees them: on
		 * the H200's VM it cost the RX lcores 6 % of their cycles at 4 lcores
		 * (both lines; 3 % for the first alone), measured within one process
		 * (bench/results/h200-2026-12-02c run 5).
		 */
		while (gnio_burstq_peek_done(bq, &d)) {
			/* Completion seen: one timestamp per pass that found work. */
			if (seen == 0 || unlikely(d.first_rx_tsc > seen))
				seen = rte_rdtsc();
			gnio_hist_add(&lc->hist, seen - d.first_rx_tsc);
			if (d.status == GNIO_BQ_DONE) {
				pl_count(&lc->cnt.processed[cs->gpu[i]], d.nb);
				/* The flagged-line kernel counts packets, not items. */
				lc->items_done[cs->gpu[i]] += p->conf.inline_bytes != 0 ? d.nb : 1;
			}
			comp_item(p, lc, cs, &d);
			gnio_burstq_release(bq);
			items++;
		}
	}
	return items;
}
