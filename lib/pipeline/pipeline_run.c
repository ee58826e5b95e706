/* SPDX-License-Identifier: BSD-3-Clause */
/* Pipeline lifecycle while running: lcore loop, start, stop with drain, stats, teardown. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_launch.h>
#include <rte_malloc.h>

#include "gnio_consumer.h"
#include "pipeline_core.h"


static int
pl_lcore_main(void *arg)
{
	struct pl_lcore *lc = arg;
	struct gnio_pipeline *p = lc->p;
	bool rx_on = lc->nb_rxq > 0;
	uint64_t prev = rte_rdtsc(), now;

	while (__atomic_load_n(&p->exit_lcores, __ATOMIC_ACQUIRE) == 0) {
		unsigned int work = 0;

		/* Quiescent point: nothing of the previous iteration is still using a port. */
		__atomic_store_n(&lc->seen_gen, __atomic_load_n(&p->port_gen, __ATOMIC_ACQUIRE),
				__ATOMIC_RELEASE);

		if (rx_on) {
			if (__atomic_load_n(&p->run_rx, __ATOMIC_ACQUIRE) != 0) {
				for (uint16_t i = 0; i < lc->nb_rxq; i++) {
					unsigned int n;

					/* Keep receiving while full bursts come and the item is open. */
					do {
						n = pl_rx_step(p, lc, lc->rxq[i]);
						work += n;
					} while (n == p->conf.burst &&
						gnio_burstq_pending(lc->rxq[i]->bq) != 0);
					/*
					 * On an lcore that also consumes and completes, finish this
					 * queue's item before the next queue: fewer mbufs out at
					 * once, so they stay in L1.
					 */
					if (lc->nb_cons != 0 && lc->comp != NULL && lc->nb_rxq > 1) {
						for (uint16_t k = 0; k < lc->nb_cons; k++)
							work += lc->cons[k]->ops->step(lc->cons[k]);
						work += pl_comp_step(p, lc, lc->comp);
					}
				}
			} else {
				pl_rx_stop(p, lc);
				rx_on = false;
			}
		}
		for (uint16_t k = 0; k < lc->nb_cons; k++)
			work += lc->cons[k]->ops->step(lc->cons[k]);
		if (lc->comp != NULL)
			work += pl_comp_step(p, lc, lc->comp);
		/* Busy cycles: iterations that did work, one timestamp per iteration. */
		now = rte_rdtsc();
		if (work != 0) {
			if (lc->nb_rxq != 0)
				pl_count(&lc->cnt.rx_cycles, now - prev);
			if (lc->comp != NULL)
				pl_count(&lc->cnt.comp_cycles, now - prev);
		}
		prev = now;
	}
	if (rx_on)
		pl_rx_stop(p, lc);
	__atomic_store_n(&lc->parked, 1, __ATOMIC_RELEASE);
	return 0;
}

int
gnio_pipeline_start(struct gnio_pipeline *p)
{
	int ret;

	if (p->running)
		return -EALREADY;
	for (uint16_t l = 0; l < p->nb_lc; l++)
		if (rte_eal_get_lcore_state(p->lc[l].lcore_id) != WAIT)
			return -EBUSY;
	if (gnio_pipeline_nb_ports_up(p) == 0)
		return -ENETDOWN;
	pl_bind_handler(p);
	/* Shared memory cannot hold more of the state than there is. */
	if (p->conf.state_shared != 0 && p->state_size != 0 && p->conf.state_shared > p->state_size) {
		snprintf(p->gpu[0].consumer.error, sizeof(p->gpu[0].consumer.error), "consumer.state_shared "
				"%u: more than the handler's state (%zu bytes)", p->conf.state_shared, p->state_size);
		return -EINVAL;
	}
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct gnio_consumer *cons = &p->gpu[g].consumer;

		cons->error[0] = '\0';
		ret = cons->ops->start(cons);
		if (ret != 0) {
			while (g-- > 0)
				p->gpu[g].consumer.ops->stop(&p->gpu[g].consumer);
			return ret;
		}
	}
	for (uint16_t l = 0; l < p->nb_lc; l++)
		memset(p->lc[l].items_done, 0, sizeof(p->lc[l].items_done));
	p->failed = false;
	p->first_rx_tsc = 0;
	p->prefill_short = 0;
	for (uint16_t i = 0; i < p->nb_rxq_total; i++)
		p->rxq[i].late_at_start = gnio_burstq_lines_late(p->rxq[i].bq);
	for (uint16_t i = 0; i < p->nb_rxq_total; i++) {
		/* --rx-pps: the queues' first packets are due one after another, not at once. */
		p->rxq[i].next_tsc = rte_rdtsc() + ((p->pace_q16 * i / p->nb_rxq_total) >> 16);
		p->rxq[i].next_frac = 0;
		p->rxq[i].seen = false;
	}
	__atomic_store_n(&p->budget, (int64_t)p->conf.max_packets, __ATOMIC_RELAXED);
	__atomic_store_n(&p->exit_lcores, 0, __ATOMIC_RELAXED);
	for (uint16_t l = 0; l < p->nb_lc; l++)
		__atomic_store_n(&p->lc[l].rx_stopped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&p->run_rx, 1, __ATOMIC_RELEASE);
	for (uint16_t l = 0; l < p->nb_lc; l++) {
		__atomic_store_n(&p->lc[l].parked, 0, __ATOMIC_RELEASE);
		ret = rte_eal_remote_launch(pl_lcore_main, &p->lc[l], p->lc[l].lcore_id);
		if (ret != 0) {
			__atomic_store_n(&p->lc[l].parked, 1, __ATOMIC_RELEASE);
			PL_LOG(ERR, "cannot launch lcore %u: %s", p->lc[l].lcore_id,
					rte_strerror(-ret));
			__atomic_store_n(&p->run_rx, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&p->exit_lcores, 1, __ATOMIC_RELEASE);
			rte_eal_mp_wait_lcore();
			for (uint16_t g = 0; g < p->nb_gpu; g++)
				p->gpu[g].consumer.ops->stop(&p->gpu[g].consumer);
			return ret;
		}
	}
	p->running = true;
	return 0;
}

static bool
pl_wait(struct gnio_pipeline *p, bool (*done)(struct gnio_pipeline *))
{
	uint64_t deadline = rte_get_timer_cycles() + rte_get_timer_hz() * PL_DRAIN_SECONDS;

	while (!done(p)) {
		if (rte_get_timer_cycles() > deadline)
			return false;
		rte_delay_us_sleep(50);
	}
	return true;
}

static bool
pl_rx_all_stopped(struct gnio_pipeline *p)
{
	for (uint16_t l = 0; l < p->nb_lc; l++)
		if (p->lc[l].nb_rxq != 0 &&
				__atomic_load_n(&p->lc[l].rx_stopped, __ATOMIC_ACQUIRE) == 0)
			return false;
	return true;
}

static bool
pl_all_completed(struct gnio_pipeline *p)
{
	for (uint16_t i = 0; i < p->nb_rxq_total; i++)
		if (gnio_burstq_in_flight(p->rxq[i].bq) != 0)
			return false;
	return true;
}

int
gnio_pipeline_stop(struct gnio_pipeline *p)
{
	int ret = 0;

	if (!p->running)
		return -EALREADY;
	/* 1. RX lcores publish what they hold and stop receiving. */
	__atomic_store_n(&p->run_rx, 0, __ATOMIC_RELEASE);
	if (!pl_wait(p, pl_rx_all_stopped))
		PL_LOG(ERR, "RX lcores did not stop in %d s", PL_DRAIN_SECONDS);
	/*
	 * 2. Each consumer completes every published item within the drain bound
	 * (at once, when it failed while running), then quits.
	 */
	p->drain_abandoned = 0;
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct gnio_consumer *cons = &p->gpu[g].consumer;
		uint16_t why;
		int r;

		cons->drain_ms = p->failed ? 0 : p->conf.drain_ms;
		r = cons->ops->stop(cons);
		if (r == 0)
			continue;
		/* What it did not run is dropped: at the bound for a healthy consumer, else its error. */
		why = r == -ETIMEDOUT && !p->failed ? GNIO_DROP_DRAIN_TIMEOUT : GNIO_DROP_CONSUMER;
		for (uint16_t i = 0; i < p->nb_rxq_total; i++)
			if (p->rxq[i].gpu == g)
				gnio_burstq_fail_ready(p->rxq[i].bq, why, &p->drain_abandoned);
		if (why == GNIO_DROP_DRAIN_TIMEOUT) {
			PL_LOG(NOTICE, "consumer %s on GPU %d: %s: %" PRIu64 " packets dropped as "
					"drain_timeout", cons->ops->name, cons->gpu_id, cons->error,
					p->drain_abandoned);
			if (ret == 0)
				ret = -ETIMEDOUT;
			continue;
		}
		PL_LOG(ERR, "consumer %s on GPU %d: %s", cons->ops->name, cons->gpu_id, cons->error);
		ret = r == -ETIMEDOUT ? -EIO : r;
	}
	/* 3. Completion lcores transmit or free everything. */
	if (!pl_wait(p, pl_all_completed))
		PL_LOG(ERR, "completion did not drain in %d s", PL_DRAIN_SECONDS);
	__atomic_store_n(&p->exit_lcores, 1, __ATOMIC_RELEASE);
	rte_eal_mp_wait_lcore();
	/* Mbufs the PMDs still hold after transmission go back to the pool. */
	for (uint16_t i = 0; i < p->conf.nb_ports; i++)
		for (uint16_t q = 0; q < p->conf.nb_txq; q++)
			rte_eth_tx_done_cleanup(p->conf.ports[i], q, 0);
	p->running = false;
	return ret;
}

uint64_t
gnio_pipeline_drain_abandoned(const struct gnio_pipeline *p)
{
	return p->drain_abandoned;
}

bool
gnio_pipeline_running(const struct gnio_pipeline *p)
{
	return p->running;
}

int
gnio_pipeline_poll(struct gnio_pipeline *p)
{
	int ret;

	if (!p->running)
		return 0;
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct gnio_consumer *cons = &p->gpu[g].consumer;

		if (cons->ops->poll != NULL) {
			ret = cons->ops->poll(cons);
			if (ret != 0) {
				/* It cannot be trusted with a drain: stop takes what is left at once. */
				p->failed = true;
				return ret;
			}
		}
	}
	if (p->conf.max_packets != 0 && __atomic_load_n(&p->budget, __ATOMIC_RELAXED) == 0 &&
			pl_received(p) >= p->conf.max_packets)
		return 1;
	return 0;
}

int
gnio_pipeline_app_txq(const struct gnio_pipeline *p, uint16_t port)
{
	if (p == NULL)
		return -EINVAL;
	for (uint16_t i = 0; i < p->conf.nb_ports; i++)
		if (p->conf.ports[i] == port)
			return p->conf.app_txq != 0 ? (int)p->conf.nb_txq : -ENOENT;
	return -EINVAL;
}

const char *
gnio_pipeline_error(const struct gnio_pipeline *p)
{
	for (uint16_t g = 0; g < p->nb_gpu; g++)
		if (p->gpu[g].consumer.error[0] != '\0')
			return p->gpu[g].consumer.error;
	return "";
}

int
gnio_pipeline_set_handler(struct gnio_pipeline *p, const char *name)
{
	const struct gnio_handler *h = gnio_handler_find(name);
	char err[160];

	if (h == NULL)
		return -ENOENT;
	if (p->running)
		return -EBUSY;
	if (pl_handler_check(&p->conf, h, err, sizeof(err)) != 0)
		return (h->flags & GNIO_HANDLER_GENERATES) ? -EINVAL : -ENOTSUP;
	/* The consumers take the handler's code at their next start. */
	p->conf.handler = h;
	p->pub.consumer.handler = h->name;
	pl_bind_handler(p);
	return 0;
}

