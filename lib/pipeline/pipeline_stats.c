/* SPDX-License-Identifier: BSD-3-Clause */
/* Statistics: the consistent snapshot, latency, end-of-run checks. Reads only. */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mempool.h>

#include "gnio_state.h"
#include "pipeline_core.h"

static const char *const pl_drop_names[] = {
#define PL_X_NAME(e, n, h) #n,
	GNIO_DROP_REASONS(PL_X_NAME)
#undef PL_X_NAME
};

const char *
gnio_drop_name(unsigned int reason)
{
	return reason < GNIO_DROP_MAX ? pl_drop_names[reason] : "?";
}

static inline uint64_t
pl_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_ACQUIRE);
}

/*
 * Counters of the later steps of a packet's way (transmit, drop, process) of
 * port id @p port into @p c, summed over lcores. Read before pl_read_rx().
 */
static void
pl_read_after_rx(const struct gnio_pipeline *p, uint16_t port, struct gnio_counts *c)
{
	for (uint16_t l = 0; l < p->nb_lc; l++) {
		const struct pl_counts *k = &p->lc[l].cnt;

		c->tx += pl_read(&k->tx[port]);
		for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
			c->drops[r] += pl_read(&k->drops[port][r]);
	}
}

static void
pl_read_rx(const struct gnio_pipeline *p, uint16_t port, struct gnio_counts *c)
{
	for (uint16_t l = 0; l < p->nb_lc; l++) {
		c->rx += pl_read(&p->lc[l].cnt.rx[port]);
		c->generated += pl_read(&p->lc[l].cnt.gen[port]);
	}
}

/* One pool's level: one read of what is available, so the figures add up. */
static void
pl_pool_level(const struct gnio_mem_pool *pool, uint32_t at_start, struct gnio_pool_level *lv)
{
	const struct rte_mempool *mp = gnio_mem_pool_mp(pool);

	snprintf(lv->name, sizeof(lv->name), "%s", mp->name);
	lv->size = mp->size;
	lv->avail = rte_mempool_avail_count(mp);
	lv->in_use = lv->size - lv->avail;
	lv->at_start = at_start;
}

int
gnio_pipeline_stats(const struct gnio_pipeline *p, struct gnio_stats *st,
		struct gnio_counts *ports, uint16_t nb_ports)
{
	const struct pl_conf *c;
	uint16_t np;

	if (p == NULL || st == NULL)
		return -EINVAL;
	c = &p->conf;
	np = ports == NULL ? 0 : RTE_MIN(nb_ports, c->nb_ports);
	memset(st, 0, sizeof(*st));
	if (np != 0)
		memset(ports, 0, sizeof(*ports) * np);
	st->tsc = rte_rdtsc();
	st->running = __atomic_load_n(&p->running, __ATOMIC_RELAXED);
	st->nb_ports = c->nb_ports;
	/* 1. What happened after reception: transmitted, dropped, processed. */
	for (uint16_t i = 0; i < c->nb_ports; i++) {
		struct gnio_counts pc = { 0 };

		pl_read_after_rx(p, c->ports[i], &pc);
		st->total.tx += pc.tx;
		for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
			st->total.drops[r] += pc.drops[r];
		if (i < np)
			ports[i] = pc;
	}
	st->nb_gpus = p->nb_gpu;
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		st->gpu[g].gpu_id = p->gpu[g].gpu_id;
		st->gpu[g].nb_ports = p->gpu[g].nb_ports;
		for (uint16_t l = 0; l < p->nb_lc; l++)
			st->gpu[g].processed += pl_read(&p->lc[l].cnt.processed[g]);
		st->processed += st->gpu[g].processed;
	}
	/* 2. Then reception: it includes every packet counted above. */
	for (uint16_t i = 0; i < c->nb_ports; i++) {
		struct gnio_counts pc = { 0 };

		pl_read_rx(p, c->ports[i], &pc);
		st->total.rx += pc.rx;
		st->total.generated += pc.generated;
		if (i < np) {
			ports[i].rx = pc.rx;
			ports[i].generated = pc.generated;
		}
	}
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
		st->dropped += st->total.drops[r];
	st->in_flight = st->total.rx + st->total.generated - st->total.tx - st->dropped;
	st->first_rx_tsc = __atomic_load_n(&p->first_rx_tsc, __ATOMIC_RELAXED);
	{
		uint64_t ps = __atomic_load_n(&p->prefill_short, __ATOMIC_RELAXED);

		st->prefill_short_len = (uint32_t)ps;
		st->prefill_short_port = (uint16_t)(ps >> 32);
	}
	for (uint16_t l = 0; l < p->nb_lc; l++) {
		st->rx_cycles += pl_read(&p->lc[l].cnt.rx_cycles);
		st->comp_cycles += pl_read(&p->lc[l].cnt.comp_cycles);
		st->rx_pps_skipped += pl_read(&p->lc[l].cnt.pace_skipped);
		st->rx_pps_stalls += pl_read(&p->lc[l].cnt.pace_stalls);
	}
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		const struct gnio_mem_pool *pools[3] = { p->gpu[g].pool, p->gpu[g].hdr_pool,
			p->gpu[g].pack_pool };

		for (unsigned int i = 0; i < 3; i++)
			if (pools[i] != NULL && st->nb_pools < GNIO_STATS_MAX_POOLS)
				pl_pool_level(pools[i], p->gpu[g].pool_start[i],
						&st->pool[st->nb_pools++]);
	}
	return 0;
}

uint64_t
pl_received(const struct gnio_pipeline *p)
{
	struct gnio_counts c = { 0 };

	for (uint16_t i = 0; i < p->conf.nb_ports; i++)
		pl_read_rx(p, p->conf.ports[i], &c);
	return c.rx + c.generated;
}

int
gnio_pipeline_consumer_stats(const struct gnio_pipeline *p, uint16_t g,
		struct gnio_consumer_stats *st)
{
	struct gnio_consumer *c;

	if (g >= p->nb_gpu)
		return -EINVAL;
	c = (struct gnio_consumer *)(uintptr_t)&p->gpu[g].consumer;
	memset(st, 0, sizeof(*st));
	if (c->ops != NULL && c->ops->stats != NULL && c->priv != NULL)
		c->ops->stats(c, st);
	return 0;
}

void
gnio_pipeline_latency(const struct gnio_pipeline *p, struct gnio_hist *h)
{
	memset(h, 0, sizeof(*h));
	for (uint16_t l = 0; l < p->nb_lc; l++)
		gnio_hist_merge(h, &p->lc[l].hist);
}

void
gnio_pipeline_reset_stats(struct gnio_pipeline *p)
{
	if (p->running)
		return;
	for (uint16_t l = 0; l < p->nb_lc; l++) {
		memset(&p->lc[l].cnt, 0, sizeof(p->lc[l].cnt));
		memset(&p->lc[l].hist, 0, sizeof(p->lc[l].hist));
	}
}

void
gnio_pipeline_check(const struct gnio_pipeline *p, struct gnio_check *chk)
{
	struct gnio_stats st;

	memset(chk, 0, sizeof(*chk));
	gnio_pipeline_stats(p, &st, NULL, 0);
	chk->total = st.total;
	chk->dropped = st.dropped;
	chk->conserved = st.total.rx + st.total.generated == st.total.tx + st.dropped;
	for (uint16_t i = 0; i < p->nb_rxq_total; i++)
		chk->in_flight += gnio_burstq_in_flight(p->rxq[i].bq);
	chk->nb_pools = st.nb_pools;
	chk->pools_full = true;
	for (uint16_t i = 0; i < st.nb_pools; i++) {
		chk->pool[i] = st.pool[i];
		if (st.pool[i].avail != st.pool[i].at_start)
			chk->pools_full = false;
	}
	chk->events_consistent = true;
	if (p->events != NULL) {
		struct gnio_events_counts ec;

		chk->events_consistent = gnio_events_counts(p->events, &ec) == 0 &&
			ec.incomplete == 0 && ec.drained <= ec.pushed;
		chk->events_pushed = ec.pushed;
		chk->events_dropped = ec.dropped;
		chk->events_drained = ec.drained;
		chk->events_pending = ec.pending;
	}
	chk->items_consistent = true;
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct gnio_consumer_stats cs;
		uint64_t done = 0;

		/*
		 * A consumer that counts the items it ran (the persistent kernel or a
		 * user kernel, once it ended), and the items its dispatchers handed out.
		 */
		gnio_pipeline_consumer_stats(p, g, &cs);
		for (uint16_t l = 0; l < p->nb_lc; l++)
			done += __atomic_load_n(&p->lc[l].items_done[g], __ATOMIC_RELAXED);
		/*
		 * Flagged lines: units are packets, and the kernel also answered those of
		 * items failed at the drain bound (dropped), since this run started.
		 */
		for (uint16_t q = 0; p->conf.inline_bytes != 0 && q < p->nb_rxq_total; q++)
			if (p->rxq[q].gpu == g && p->rxq[q].bq != NULL)
				done += gnio_burstq_lines_late(p->rxq[q].bq) - p->rxq[q].late_at_start;
		if (!((cs.warps != 0 && cs.wait_ns + cs.work_ns != 0) || cs.items_counted))
			continue;
		if (cs.items != done || (cs.polls != 0 && cs.dispatched != done + cs.skipped)) {
			/* The GPU that differs, and its counts. */
			chk->items_consistent = false;
			chk->items_gpu = g;
			chk->items_consumer = cs.items;
			chk->items_dispatched = cs.dispatched;
			chk->items_completed = done;
			break;
		}
		chk->items_consumer += cs.items;
		chk->items_dispatched += cs.dispatched;
		chk->items_completed += done;
	}
}
