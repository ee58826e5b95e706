/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement: RX queues on RX lcores (each port's NUMA node first), a worker
 * lcore for each host-stepped consumer, and completion on a dedicated lcore or
 * on the RX lcores. Pure logic over the worker lcores and their NUMA nodes it
 * is given (tests give it made-up ones).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pipeline_core.h"

#define PL_FAIL(errnum, ...) do { \
	snprintf(err, err_len, __VA_ARGS__); \
	ret = -(errnum); \
	goto fail; \
} while (0)

/* Put RX queues on RX lcores, preferring each port's NUMA node. */
int
pl_place(struct gnio_pipeline *p, const unsigned int *workers, const int *sockets,
		unsigned int nb_workers, char *err, size_t err_len)
{
	const struct pl_conf *c = &p->conf;
	/* Host-stepped consumers (host, cuda-burst, cuda-graph) need an lcore each. */
	unsigned int needs = p->ops->step != NULL ? p->nb_gpu : 0;
	unsigned int spare = nb_workers - c->nb_cores;
	int ret = 0;

	for (uint16_t i = 0; i < c->nb_cores; i++) {
		struct pl_lcore *lc = &p->lc[p->nb_lc++];

		lc->lcore_id = workers[i];
		lc->socket = sockets[i];
		lc->p = p;
	}
	for (uint16_t i = 0; i < p->nb_rxq_total; i++) {
		struct pl_rxq *rq = &p->rxq[i];
		struct pl_lcore *best = NULL;

		for (uint16_t l = 0; l < c->nb_cores; l++) {
			struct pl_lcore *lc = &p->lc[l];
			bool local = rq->socket < 0 || lc->socket == rq->socket;
			bool best_local = best != NULL &&
				(rq->socket < 0 || best->socket == rq->socket);

			if (best == NULL || (local && !best_local) ||
					(local == best_local && lc->nb_rxq < best->nb_rxq))
				best = lc;
		}
		if (best->nb_rxq >= PL_MAX_RXQ_PER_LCORE)
			PL_FAIL(EINVAL, "too many RX queues for %u lcores", c->nb_cores);
		best->rxq[best->nb_rxq++] = rq;
		rq->lcore = best->lcore_id;
		if (rq->socket >= 0 && best->socket != rq->socket)
			pl_note(p, "port %u (%s) queue %u is on NUMA %d but its RX lcore %u is on NUMA %d: "
					"every packet crosses the inter-socket link",
					rq->port, pl_port_name(rq->port), rq->queue, rq->socket,
					best->lcore_id, best->socket);
	}
	/* Each consumer: a lcore of its own while there are some to spare, else shared. */
	for (unsigned int g = 0; g < needs; g++) {
		unsigned int w = g < spare ? c->nb_cores + g : nb_workers - 1 - (g % nb_workers);
		unsigned int id = workers[w];
		struct pl_lcore *lc = NULL;

		for (uint16_t l = 0; l < p->nb_lc; l++)
			if (p->lc[l].lcore_id == id)
				lc = &p->lc[l];
		if (lc == NULL) {
			lc = &p->lc[p->nb_lc++];
			lc->lcore_id = id;
			lc->socket = sockets[w];
			lc->p = p;
		}
		lc->cons[lc->nb_cons++] = &p->gpu[g].consumer;
		if (g >= spare)
			pl_note(p, "consumer of GPU %d shares lcore %u with other work "
					"(give the EAL more lcores for a dedicated one)", p->gpu[g].gpu_id, id);
	}
	/* Completion: one dedicated lcore if another is spare, else each RX lcore completes its own. */
	if (c->completion == GNIO_COMPLETION_LCORE && spare < needs + 1)
		PL_FAIL(EINVAL, "consumer.completion=lcore: a dedicated completion lcore needs %u "
				"worker lcores, the EAL gave %u (-l)",
				c->nb_cores + needs + 1, nb_workers);
	if (c->completion != GNIO_COMPLETION_RX && spare >= needs + 1) {
		struct pl_lcore *lc = &p->lc[p->nb_lc++];
		struct pl_comp *cs = &p->comp[p->nb_comp++];

		lc->lcore_id = workers[c->nb_cores + needs];
		lc->socket = sockets[c->nb_cores + needs];
		lc->p = p;
		lc->comp = cs;
		cs->txq = 0;
		for (uint16_t i = 0; i < p->nb_rxq_total; i++) {
			cs->gpu[cs->nb_bq] = p->rxq[i].gpu;
			cs->bq[cs->nb_bq++] = p->rxq[i].bq;
		}
	} else {
		for (uint16_t l = 0; l < c->nb_cores; l++) {
			struct pl_lcore *lc = &p->lc[l];
			struct pl_comp *cs = &p->comp[p->nb_comp++];

			lc->comp = cs;
			cs->txq = l;
			for (uint16_t i = 0; i < lc->nb_rxq; i++) {
				cs->gpu[cs->nb_bq] = lc->rxq[i]->gpu;
				cs->bq[cs->nb_bq++] = lc->rxq[i]->bq;
			}
		}
	}
	for (uint16_t l = 0; l < p->nb_lc; l++)
		p->lc[l].cnt = (struct pl_counts){ 0 };
	return 0;
fail:
	return ret;
}

